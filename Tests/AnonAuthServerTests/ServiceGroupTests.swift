import AnonAuthService
import Synchronization
import Testing

@testable import AnonAuthServer

/// The service group's rules, with services that write what happens to them into a
/// journal: start in declared order (each ready before the next), stop in reverse, a
/// failure stops the group with its reason, and the drain deadline cuts a stop short.
/// No clocks: the deadline is a latch the test (or a service) fires; a group that waits
/// forever where it should not fails at the time limit instead of hanging (five minutes:
/// on a busy machine the whole run of suites takes minutes).
@Suite(.timeLimit(.minutes(5))) struct ServiceGroupTests {
  /// What happened, in order.
  final class Journal: Sendable {
    private let entries = Mutex<[String]>([])
    func note(_ entry: String) { entries.withLock { $0.append(entry) } }
    var all: [String] { entries.withLock { $0 } }
  }

  struct Failed: Error, CustomStringConvertible {
    let why: String
    var description: String { why }
  }

  /// A service that notes its start, its readiness and its stop. `failAfterReady` makes
  /// its `run` throw once that latch fires; `ignoresShutdown` keeps it stopping until its
  /// task is cancelled (the drain deadline).
  struct Scripted: Service {
    let name: String
    let journal: Journal
    var failAtStart = false
    var failAfterReady: ShutdownTrigger?
    var ignoresShutdown = false
    /// Fired when it is asked to stop (a test's way to make time pass).
    var onStopRequested: ShutdownTrigger?

    func run(_ context: ServiceContext<String>) async throws {
      journal.note("start \(name)")
      // Give the next service every chance to start early: it must not.
      for _ in 0..<10 { await Task.yield() }
      if failAtStart { throw Failed(why: "\(name) cannot bind") }
      journal.note("ready \(name)")
      context.ready("\(name) started")
      if let failAfterReady {
        await withTaskGroup(of: Bool.self) { race in
          race.addTask {
            await failAfterReady.wait()
            return true
          }
          race.addTask {
            await context.shutdownRequested()
            return false
          }
          let failed = await race.next() ?? false
          race.cancelAll()
          if failed { journal.note("failing \(name)") }
        }
        if !context.shutdown.isFired { throw Failed(why: "\(name) lost its socket") }
      } else {
        await context.shutdownRequested()
      }
      onStopRequested?.fire()
      if ignoresShutdown {
        await ShutdownTrigger().wait()  // only cancellation ends this
      }
      journal.note("stop \(name)\(Task.isCancelled ? " (cancelled)" : "")")
    }
  }

  static func group(deadline: ShutdownTrigger = ShutdownTrigger()) -> ServiceGroup {
    ServiceGroup(logger: Logger(minimum: .error, sink: { _ in })) { await deadline.wait() }
  }

  @Test func startsInDeclaredOrderEachReadyBeforeTheNextAndStopsInReverse() async throws {
    let journal = Journal()
    let group = Self.group()
    var given: [String] = []
    for name in ["store", "workers", "listener"] {
      given.append(try await group.start(Scripted(name: name, journal: journal)))
    }
    #expect(given == ["store started", "workers started", "listener started"])
    try await group.run(until: {})
    #expect(
      journal.all == [
        "start store", "ready store", "start workers", "ready workers", "start listener", "ready listener",
        "stop listener", "stop workers", "stop store",
      ])
  }

  @Test func aServiceFailingWhileServingStopsTheGroupWithItsReason() async throws {
    let journal = Journal()
    let group = Self.group()
    let socketLost = ShutdownTrigger()
    _ = try await group.start(Scripted(name: "store", journal: journal))
    _ = try await group.start(Scripted(name: "listener", journal: journal, failAfterReady: socketLost))
    _ = try await group.start(Scripted(name: "ops", journal: journal))
    socketLost.fire()
    let failure = await #expect(throws: ServiceFailure.self) {
      try await group.run(until: { await ShutdownTrigger().wait() })
    }
    #expect(failure?.service == "listener")
    #expect(failure?.whileStarting == false)
    #expect(failure?.description == "listener failed: listener lost its socket")
    // The others stop in reverse order; the failed one is not asked again.
    #expect(journal.all.suffix(3) == ["failing listener", "stop ops", "stop store"])
  }

  @Test func aServiceFailingToStartStopsThoseBeforeItAndStartsNoMore() async throws {
    let journal = Journal()
    let group = Self.group()
    _ = try await group.start(Scripted(name: "store", journal: journal))
    _ = try await group.start(Scripted(name: "ops", journal: journal))
    let failure = await #expect(throws: ServiceFailure.self) {
      _ = try await group.start(Scripted(name: "listener", journal: journal, failAtStart: true))
    }
    #expect(failure?.service == "listener")
    #expect(failure?.whileStarting == true)
    // As the daemon prints it: the part's own error, unchanged.
    #expect(failure?.description == "listener cannot bind")
    #expect(journal.all.suffix(3) == ["start listener", "stop ops", "stop store"])
    await #expect(throws: ServiceFailure.self) {
      _ = try await group.start(Scripted(name: "late", journal: journal))
    }
    #expect(!journal.all.contains("start late"))
  }

  /// A service still stopping when the drain deadline passes is cancelled; the ones after
  /// it still get their stop (the store closes), and the group ends normally.
  @Test func theDrainDeadlineCancelsAServiceStillStopping() async throws {
    let journal = Journal()
    let deadline = ShutdownTrigger()
    let group = Self.group(deadline: deadline)
    _ = try await group.start(Scripted(name: "store", journal: journal))
    // Asked to stop, it lets the drain time run out (fires the deadline) and waits on.
    _ = try await group.start(
      Scripted(name: "listener", journal: journal, ignoresShutdown: true, onStopRequested: deadline))
    try await group.run(until: {})
    #expect(journal.all.suffix(2) == ["stop listener (cancelled)", "stop store (cancelled)"])
  }

  /// Before the deadline nothing is cancelled: each stop ran to its end on its own.
  @Test func servicesThatStopInTimeAreNotCancelled() async throws {
    let journal = Journal()
    let group = Self.group()
    _ = try await group.start(Scripted(name: "store", journal: journal))
    _ = try await group.start(Scripted(name: "listener", journal: journal))
    try await group.run(until: {})
    #expect(journal.all.suffix(2) == ["stop listener", "stop store"])
  }

  /// A worker's loop runs in a task of the group's and ends when the group stops it.
  @Test func aWorkerLoopIsCancelledAtTheStop() async throws {
    let journal = Journal()
    let group = Self.group()
    let looping = ShutdownTrigger()
    try await group.start(
      WorkerService("worker") {
        looping.fire()
        await ShutdownTrigger().wait()
        journal.note("loop ended\(Task.isCancelled ? " (cancelled)" : "")")
      })
    await looping.wait()
    try await group.run(until: {})
    #expect(journal.all == ["loop ended (cancelled)"])
  }
}
