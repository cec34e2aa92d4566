import AnonAuthService
import AnonAuthWire
import Foundation
import Synchronization
import Testing

/// Fair admission of expensive work (the exposure review, docs/security.md): password hashing, signing and writes are
/// admitted per end-user IP and per project, successes counted, with a share of each
/// pool per IP and per project, so that one source or one tenant cannot starve others.
@Suite struct FairAdmissionTests {
  static let attacker = "192.0.2.66"
  static let bystander = "198.51.100.20"

  /// The finding: one IP signing in successfully in a loop (a success gave its attempt
  /// back, so nothing ever stopped it) is limited; another IP's sign-in, in the same
  /// project and in another, is answered.
  @Test func oneIPsFloodOfSuccessfulSignInsIsLimited() async throws {
    try await AdmissionHarness.with(limits: .only { $0.password.perIP = 1 }) { h in
      for i in 0..<3 { _ = try await h.signUp(email: "a\(i)@example.com", ip: "203.0.113.\(i + 1)") }
      _ = try await h.signUp(email: "b@example.com", project: "adm-b", ip: "203.0.113.9")
      await AdmissionFlood.expectLimited(h.env.metrics, .password) { i async throws(RPCError) in
        _ = try await h.signIn(email: "a\(i % 3)@example.com", ip: Self.attacker)
      }
      #expect(
        h.env.metrics.prometheusText().contains(
          "anonauth_admission_refusals_total{work=\"password\",limit=\"ip_rate\"} 1\n"))
      // The bystander, in the same project and in another.
      _ = try await h.signIn(email: "a0@example.com", ip: Self.bystander)
      _ = try await h.signIn(email: "b@example.com", project: "adm-b", ip: Self.bystander)
      // The address is limited in every project, and admitted again once it waited.
      await expectLinkError(.tooManyAttempts) {
        try await h.signIn(email: "b@example.com", project: "adm-b", ip: Self.attacker)
      }
      h.clock.advance(seconds: 1)
      _ = try await h.signIn(email: "a1@example.com", ip: Self.attacker)
    }
  }

  /// One project's sign-ups from many addresses use up its own rate; another project's
  /// sign-up is answered, and the refused calls wrote nothing.
  @Test func oneProjectsFloodDoesNotStarveAnother() async throws {
    try await AdmissionHarness.with(limits: .only { $0.write.perProject = 2 }) { h in
      var admitted = 0
      var refusal: RPCError?
      for i in 0..<40 {
        do throws(RPCError) {
          _ = try await h.anonymous(ip: "10.0.\(i / 200).\(i % 200 + 1)")
          admitted += 1
        } catch {
          refusal = error
        }
      }
      #expect(admitted == 20)
      #expect(refusal?.reason == Reason.tooManyAttempts.name)
      #expect(refusal?.details["retry_after_seconds"] != nil)
      #expect(h.env.metrics.admissionRefusals(.write, .projectRate) == 20)
      #expect(try await h.accountCount("adm-a") == 20)
      _ = try await h.anonymous(project: "adm-b", ip: "10.0.0.1")
      #expect(try await h.accountCount("adm-b") == 1)
    }
  }

  /// A sign-up whose token would be refused is refused before its account is written.
  @Test func aSignUpRefusedItsTokenWritesNothing() async throws {
    try await AdmissionHarness.with(limits: .only { $0.signing.perIP = 1 }) { h in
      for _ in 0..<10 { _ = try await h.anonymous(ip: Self.attacker) }
      let refused = await expectLinkError(.tooManyAttempts) { try await h.anonymous(ip: Self.attacker) }
      #expect(refused?.details["retry_after_seconds"] == "1")
      #expect(try await h.accountCount("adm-a") == 10)
      _ = try await h.anonymous(ip: Self.bystander)
    }
  }

  /// Work a call reserved but never did (a wrong password: no write, no token) is given
  /// back to the rates, so failed attempts are paced by the password rate and the
  /// failed-sign-in throttle only.
  @Test func unusedReservationsAreGivenBack() async throws {
    try await AdmissionHarness.with(limits: .only { $0.write.perIP = 1 }) { h in
      for i in 0..<3 { _ = try await h.signUp(email: "r\(i)@example.com", ip: "203.0.113.\(i + 1)") }
      for i in 0..<12 {
        await expectLinkError(.invalidLoginCredentials) {
          try await h.signIn(email: "r\(i % 3)@example.com", password: "wrong-one", ip: Self.attacker)
        }
      }
      _ = try await h.signIn(email: "r0@example.com", ip: Self.attacker)
    }
  }

  /// No single IP holds more than its share of the password pool's places: with the
  /// pool's thread held, the attacker's fifth concurrent sign-in is refused at once,
  /// while a bystander's is queued and answered.
  @Test func oneIPHoldsOnlyItsShareOfThePasswordPool() async throws {
    let gate = Gate()
    try await AdmissionHarness.with(
      limits: .only { $0.ipSharePercent = 25 },
      passwordPool: { CPUPool(threads: 1, name: "anonauth-test-share", maxQueued: 15) }
    ) { h in
      _ = try await h.signUp(email: "share@example.com", ip: "203.0.113.1")
      let pool = h.env.passwordPool
      let blocker = pool.block(on: gate)
      defer { gate.open() }
      try await waitUntil { gate.waiting }
      // 1 thread + 15 queued = 16 places; 25 % of them is 4 for one address.
      let flood = (0..<4).map { _ in
        Task { try await h.signIn(email: "share@example.com", ip: Self.attacker) }
      }
      try await waitUntil { pool.jobsQueued == 4 }
      // The fifth is answered at once (were it queued, it would wait for the gate).
      let answered = RanFlag()
      let fifth = Task {
        defer { answered.set() }
        return try await h.signIn(email: "share@example.com", ip: Self.attacker)
      }
      try await waitUntil(seconds: 20) { answered.isSet }
      // Another address is admitted while the attacker holds its share.
      let bystander = Task { try await h.signIn(email: "share@example.com", ip: Self.bystander) }
      try await waitUntil { pool.jobsQueued >= 5 }
      gate.open()
      let refused = await expectLinkError(.tooManyAttempts) { try await fifth.value }
      #expect(refused?.details["retry_after_seconds"] == "1")
      #expect(h.env.metrics.admissionRefusals(.password, .ipShare) == 1)
      try await blocker.value
      for task in flood { _ = try await task.value }
      _ = try await bystander.value
      // Every place was given back.
      let source = Admission.Source(projectID: "adm-a", ipKey: Self.attacker)
      for work in AdmissionWork.allCases { #expect(h.admission.held(work, source) == (0, 0)) }
    }
  }

  /// One project holds at most its share of a pool's places too.
  @Test func oneProjectHoldsOnlyItsShare() throws {
    var limits = AdmissionLimits.off
    limits.projectSharePercent = 50
    let admission = Admission(limits: limits, places: { _ in 10 }, clock: ManualClock())
    let tickets = try (0..<5).map { i in
      try admission.admit(.password, .init(projectID: "busy", ipKey: "10.0.0.\(i)"))
    }
    do {
      _ = try admission.admit(.password, .init(projectID: "busy", ipKey: "10.0.1.1"))
      Issue.record("a sixth place of ten went to one project")
    } catch {
      #expect(error.reason == Reason.tooManyAttempts.name)
      #expect(error.details["retry_after_seconds"] == "1")
    }
    _ = try admission.admit(.password, .init(projectID: "quiet", ipKey: "10.0.1.1")).leave()
    tickets[0].leave()
    _ = try admission.admit(.password, .init(projectID: "busy", ipKey: "10.0.1.1")).leave()
  }

  /// The rate tables hold at most `maxKeys` keys however many addresses come, and an
  /// address that floods is still limited after them.
  @Test func tablesStayBoundedUnderManyIPs() throws {
    var limits = AdmissionLimits.only { $0.password = .init(perIP: 1, perProject: 1_000_000) }
    limits.maxKeys = 100
    let admission = Admission(limits: limits, places: { _ in 100 }, clock: ManualClock())
    var most = 0
    for i in 0..<20_000 {
      let ip = "10.\(i / 65_536).\(i / 256 % 256).\(i % 256)"
      try admission.admit(.password, .init(projectID: "p", ipKey: ip)).leave()
      most = max(most, admission.trackedKeys)
    }
    #expect(most <= 101, "one key per address and one for the project at most")
    let flooder = Admission.Source(projectID: "p", ipKey: "192.0.2.1")
    for _ in 0..<10 { try admission.admit(.password, flooder).leave() }
    #expect(throws: RPCError.self) { try admission.admit(.password, flooder) }
  }

  /// IPv6 addresses of one /64 are one address for admission, as for the sign-up quota.
  @Test func anIPv6SlashSixtyFourIsOneSource() async throws {
    try await AdmissionHarness.with(limits: .only { $0.signing.perIP = 1 }) { h in
      for i in 0..<10 { _ = try await h.anonymous(ip: "2001:db8:1:2::\(i + 1)") }
      await expectLinkError(.tooManyAttempts) { try await h.anonymous(ip: "2001:db8:1:2:ffff::1") }
      _ = try await h.anonymous(ip: "2001:db8:1:3::1")
    }
  }
}

/// The password pool serves its waiting jobs in turn per source, not first come first
/// served: a bystander's job waits for one of the attacker's, not for all of them.
@Suite struct FairQueueTests {
  final class Log: Sendable {
    private let entries = Mutex<[String]>([])
    func add(_ entry: String) { entries.withLock { $0.append(entry) } }
    var all: [String] { entries.withLock { $0 } }
  }

  @Test func aPoolServesSourcesInTurn() async throws {
    let pool = CPUPool(threads: 1, name: "anonauth-test-fair", maxQueued: 64)
    defer { pool.shutdown() }
    let gate = Gate()
    let blocker = pool.block(on: gate)
    defer { gate.open() }
    try await waitUntil { gate.waiting }
    let admission = Admission(limits: .off, places: { _ in 100 }, clock: ManualClock())
    let log = Log()
    @Sendable func job(_ name: String, _ source: Admission.Source) -> Task<Void, any Error> {
      Task {
        try await admission.scope(source) { admitted async throws(RPCError) in
          do {
            try await pool.submit(admitted) { () throws(Never) in log.add(name) }
          } catch {
            throw RPCError(.internalError, "\(error)")
          }
        }
      }
    }
    let attacker = Admission.Source(projectID: "p", ipKey: "192.0.2.66")
    var tasks: [Task<Void, any Error>] = []
    for i in 0..<5 {
      tasks.append(job("a\(i)", attacker))
      try await waitUntil { pool.jobsQueued == i + 1 }
    }
    tasks.append(job("bystander", .init(projectID: "p", ipKey: "198.51.100.20")))
    try await waitUntil { pool.jobsQueued == 6 }
    tasks.append(job("other-project", .init(projectID: "q", ipKey: "192.0.2.66")))
    try await waitUntil { pool.jobsQueued == 7 }
    gate.open()
    try await blocker.value
    for task in tasks { try await task.value }
    #expect(log.all == ["a0", "other-project", "bystander", "a1", "a2", "a3", "a4"])
  }
}
