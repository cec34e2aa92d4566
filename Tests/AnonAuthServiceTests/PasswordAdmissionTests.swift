import AnonAuthService
import AnonAuthWire
import Foundation
import Synchronization
import Testing

/// Admission before scrypt: the sign-up quota and the email check come before any hash,
/// the password pool's queue is bounded, a cancelled call's job is dropped, and token
/// signing never waits behind password hashing.
@Suite struct PasswordAdmissionTests {
  @Test func overQuotaEmailSignUpDoesNotHash() async throws {
    try await LinkingHarness.with { h in
      try await h.updateConfig({ $0.signUpQuotaPerHour = 1 }, mask: ["sign_up_quota_per_hour"])
      _ = try await h.signUp(email: "first@example.com", password: "secret-1")
      let hashed = h.env.passwordPool.jobsRun
      #expect(hashed >= 1)
      for i in 0..<5 {
        await expectLinkError(.tooManyAttempts) {
          try await h.signUp(email: "over\(i)@example.com", password: "secret-1")
        }
      }
      #expect(h.env.passwordPool.jobsRun == hashed)
    }
  }

  /// Probing which emails are taken counts against the sign-up quota like any sign-up.
  @Test func takenEmailProbesAreCountedAgainstTheQuota() async throws {
    try await LinkingHarness.with { h in
      try await h.updateConfig({ $0.signUpQuotaPerHour = 2 }, mask: ["sign_up_quota_per_hour"])
      _ = try await h.signUp(email: "taken@example.com", password: "secret-1")
      let hashed = h.env.passwordPool.jobsRun
      await expectLinkError(.emailExists) {
        try await h.signUp(email: "taken@example.com", password: "x-secret")
      }
      #expect(h.env.passwordPool.jobsRun == hashed)
      // The quota is spent: a taken email no longer answers EMAIL_EXISTS.
      for _ in 0..<3 {
        let refused = await expectLinkError(.tooManyAttempts) {
          try await h.signUp(email: "taken@example.com", password: "x-secret")
        }
        #expect(refused?.details["retry_after_seconds"] != nil)
      }
      #expect(try await h.signUpsCounted("password") == 1)
    }
  }

  @Test func linkingATakenEmailDoesNotHash() async throws {
    try await LinkingHarness.with { h in
      _ = try await h.signUp(email: "owner@example.com", password: "secret-1")
      let anonymous = try await h.anonymous()
      let hashed = h.env.passwordPool.jobsRun
      await expectLinkError(.emailExists) {
        try await h.link(anonymous.idToken, LinkingHarness.password("Owner@example.com", "secret-2"))
      }
      #expect(h.env.passwordPool.jobsRun == hashed)
      #expect(try await h.account(anonymous.localId).isAnonymous)
    }
  }

  @Test func poolRefusesBeyondItsQueueBound() async throws {
    let pool = CPUPool(threads: 1, name: "anonauth-test-bound", maxQueued: 2)
    defer { pool.shutdown() }
    let gate = Gate()
    let blocker = pool.block(on: gate)
    try await waitUntil { pool.jobsQueued == 0 && gate.waiting }
    let queued = (0..<2).map { _ in
      Task { try await pool.submit(.internalWork(.standalone)) { () throws(Never) in 1 } }
    }
    try await waitUntil { pool.jobsQueued == 2 }
    do {
      _ = try await pool.submit(.internalWork(.standalone)) { () throws(Never) in 1 }
      Issue.record("a job beyond the queue bound ran")
    } catch {
      #expect(refusal(error) == .queueFull, "\(error)")
    }
    #expect(pool.jobsRefused == 1)
    gate.open()
    try await blocker.value
    for task in queued { #expect(try await task.value == 1) }
  }

  @Test func cancelledJobIsNotRun() async throws {
    let pool = CPUPool(threads: 1, name: "anonauth-test-cancel", maxQueued: 8)
    defer { pool.shutdown() }
    let gate = Gate()
    let blocker = pool.block(on: gate)
    try await waitUntil { gate.waiting }
    let flag = RanFlag()
    let victim = Task { try await pool.submit(.internalWork(.standalone)) { () throws(Never) in flag.set() } }
    try await waitUntil { pool.jobsQueued == 1 }
    victim.cancel()
    gate.open()
    try await blocker.value
    do {
      try await victim.value
      Issue.record("the cancelled job ran")
    } catch {
      #expect(refusal(error) == .cancelled, "\(error)")
    }
    #expect(!flag.isSet)
    #expect(pool.jobsDropped == 1)
  }

  /// With the password pool blocked and its queue full, sign-ups that only sign a token
  /// are still answered, and a password sign-up is refused at once.
  @Test func signingDoesNotWaitBehindPasswordHashing() async throws {
    let gate = Gate()
    try await LinkingHarness.with(passwordPool: {
      CPUPool(threads: 1, name: "anonauth-test-busy", maxQueued: 1)
    }) { h in
      defer { gate.open() }
      let (blocker, queued) = try await h.env.passwordPool.blockAndFill(on: gate)
      let answered = await answersPromptly { (try? await h.anonymous(ip: "192.0.2.77")) != nil }
      #expect(answered, "an anonymous sign-up waited behind password hashing")
      let refused = await expectLinkError(.tooManyAttempts) {
        try await h.signUp(email: "busy@example.com", password: "secret-1", ip: "192.0.2.78")
      }
      #expect(h.env.metrics.passwordPoolRefusals.load(ordering: .relaxed) == 1)
      #expect(refused?.details["retry_after_seconds"] == "1")
      gate.open()
      try await blocker.value
      #expect(try await queued.value == 1)
    }
  }
}

extension PasswordAdmissionTests {
  /// A sign-in the full password pool refused was never judged: it does not count as a
  /// failed guess.
  @Test func aSignInRefusedForAFullPoolIsNotAFailure() async throws {
    let gate = Gate()
    let throttle = SignInThrottle(accountLimit: .init(maxFailures: 1, windowMs: 600_000))
    try await LinkingHarness.with(
      throttle: throttle, passwordPool: { CPUPool(threads: 1, name: "anonauth-test-full", maxQueued: 1) }
    ) { h in
      _ = try await h.signUp(email: "full@example.com", password: "secret-1")
      defer { gate.open() }
      let (blocker, queued) = try await h.env.passwordPool.blockAndFill(on: gate)
      let refused = await expectLinkError(.tooManyAttempts) {
        try await h.signIn(email: "full@example.com", password: "secret-1")
      }
      #expect(refused?.details["retry_after_seconds"] == "1")
      gate.open()
      try await blocker.value
      _ = try await queued.value
      _ = try await h.signIn(email: "full@example.com", password: "secret-1")
    }
  }
}

extension PasswordAdmissionTests {
  /// A sign-up the full pool refused was not carried out: its place in the per-IP quota
  /// goes back, so a client that retries as told does not use up its quota.
  @Test func aSignUpRefusedForAFullPoolGivesItsQuotaPlaceBack() async throws {
    let gate = Gate()
    try await LinkingHarness.with(passwordPool: {
      CPUPool(threads: 1, name: "anonauth-test-refund", maxQueued: 1)
    }) { h in
      try await h.updateConfig({ $0.signUpQuotaPerHour = 1 }, mask: ["sign_up_quota_per_hour"])
      defer { gate.open() }
      let (blocker, queued) = try await h.env.passwordPool.blockAndFill(on: gate)
      await expectLinkError(.tooManyAttempts) {
        try await h.signUp(email: "retry@example.com", password: "secret-1", ip: "192.0.2.90")
      }
      #expect(h.env.metrics.passwordPoolRefusals.load(ordering: .relaxed) == 1)
      gate.open()
      try await blocker.value
      _ = try await queued.value
      // The give-back is written on its own; the retry gets through once it is in.
      var account: AuthResponse?
      for _ in 0..<100 where account == nil {
        account = try? await h.signUp(email: "retry@example.com", password: "secret-1", ip: "192.0.2.90")
        if account == nil { try await Task.sleep(for: .milliseconds(50)) }
      }
      #expect(account != nil, "the refused sign-up kept its place in a quota of one")
      await expectLinkError(.tooManyAttempts) {  // and the quota of one is then spent
        try await h.signUp(email: "second@example.com", password: "secret-1", ip: "192.0.2.90")
      }
    }
  }
}

/// Why the pool did not run a job, if that is what `error` says.
func refusal(_ error: any Error) -> CPUPool.Refused? {
  guard let outcome = error as? CPUPool.Outcome<Never>, case .refused(let why) = outcome else { return nil }
  return why
}

/// Holds a pool thread until opened.
final class Gate: Sendable {
  private let semaphore = DispatchSemaphore(value: 0)
  private let entered = Atomic<Bool>(false)
  private let opened = Atomic<Bool>(false)

  var waiting: Bool { entered.load(ordering: .acquiring) }

  func wait() {
    entered.store(true, ordering: .releasing)
    semaphore.wait()
  }

  /// Lets the waiting job go (once; later calls do nothing).
  func open() {
    if !opened.exchange(true, ordering: .acquiringAndReleasing) { semaphore.signal() }
  }
}

final class RanFlag: Sendable {
  private let value = Atomic<Bool>(false)
  var isSet: Bool { value.load(ordering: .acquiring) }
  func set() { value.store(true, ordering: .releasing) }
}

/// Polls `condition` every 5 ms for at most `seconds` (generous: the machine may be busy).
func waitUntil(
  seconds: Int = 30, _ condition: () -> Bool, sourceLocation: SourceLocation = #_sourceLocation
) async throws {
  for _ in 0..<(seconds * 200) {
    if condition() { return }
    try await Task.sleep(for: .milliseconds(5))
  }
  Issue.record("condition not met within \(seconds) s", sourceLocation: sourceLocation)
}

/// Whether `call` succeeds before 20 s have passed: a call that must not queue behind work
/// held elsewhere answers long before, one that waits loses the race (and the test fails
/// at once instead of hanging).
func answersPromptly(_ call: @escaping @Sendable () async -> Bool) async -> Bool {
  await withTaskGroup(of: Bool.self) { group in
    group.addTask { await call() }
    group.addTask {
      try? await Task.sleep(for: .seconds(20))
      return false
    }
    let first = await group.next() ?? false
    group.cancelAll()
    return first
  }
}

extension CPUPool {
  /// Holds this pool's one thread with a job that waits for `gate`; returns that job, to be
  /// awaited once the test opens the gate.
  func block(on gate: Gate) -> Task<Void, any Error> {
    Task { try await submit(.internalWork(.standalone)) { () throws(Never) in gate.wait() } }
  }

  /// Holds this pool's one thread on `gate` and fills its one queue slot, as a pool busy
  /// with password hashing; returns both jobs, to be awaited once the test opens the gate.
  func blockAndFill(
    on gate: Gate, sourceLocation: SourceLocation = #_sourceLocation
  ) async throws -> (blocker: Task<Void, any Error>, queued: Task<Int, any Error>) {
    let blocker = block(on: gate)
    try await waitUntil({ gate.waiting }, sourceLocation: sourceLocation)
    let queued = Task { try await submit(.internalWork(.standalone)) { () throws(Never) in 1 } }
    try await waitUntil({ jobsQueued == 1 }, sourceLocation: sourceLocation)
    return (blocker, queued)
  }
}
