import Synchronization

/// A long-lived part of the daemon (a listener, the store, a worker), run by a
/// `ServiceGroup`: one async function holds its whole life, so what it starts and what it
/// stops sit side by side and the group alone decides when.
///
/// `run` starts the part, calls `context.ready(_:)` once it serves (the group starts the
/// next service only then, and hands the value to whoever declared the service), waits
/// for `context.shutdownRequested()`, stops gracefully and returns. Throwing, before or
/// after `ready`, fails the group with this service's name and the error. When the drain
/// deadline passes the group cancels the task still running `run`: the part then cuts its
/// stop short (the RPC server closes the connections left).
protocol Service: Sendable {
  /// What the service gives the services declared after it once it is ready.
  associatedtype Started: Sendable = Void
  /// Names the service in the group's logs and in its failure.
  var name: String { get }
  func run(_ context: ServiceContext<Started>) async throws
}

/// One service's link to its group: it says when the service is ready and when it must
/// stop.
final class ServiceContext<Started: Sendable>: Sendable {
  private let events: ServiceEvents
  private let index: Int
  private let started = Mutex<Started?>(nil)
  let shutdown: ShutdownTrigger

  init(events: ServiceEvents, index: Int, shutdown: ShutdownTrigger) {
    self.events = events
    self.index = index
    self.shutdown = shutdown
  }

  /// The service serves: the group goes on with the next one. Only the first call counts.
  func ready(_ value: Started) {
    let first = started.withLock { slot -> Bool in
      guard slot == nil else { return false }
      slot = value
      return true
    }
    if first { events.post(.ready(index)) }
  }

  /// What `ready` was given (nil before).
  var startedValue: Started? { started.withLock { $0 } }

  /// Returns once the group asks this service to stop (at once if it already has), or
  /// when the task running the service is cancelled.
  func shutdownRequested() async { await shutdown.wait() }
}

extension ServiceContext where Started == Void {
  func ready() { ready(()) }
}

/// A one-way latch: `fire` once, and every waiter (present or future) returns. A task
/// that is cancelled stops waiting too.
final class ShutdownTrigger: Sendable {
  private struct State {
    var fired = false
    var nextID = 0
    var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
  }
  private let state = Mutex(State())

  var isFired: Bool { state.withLock { $0.fired } }

  func fire() {
    let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
      state.fired = true
      defer { state.waiters = [:] }
      return Array(state.waiters.values)
    }
    for waiter in waiters { waiter.resume() }
  }

  func wait() async {
    let id = state.withLock { state -> Int in
      state.nextID += 1
      return state.nextID
    }
    await withTaskCancellationHandler {
      await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        let now = state.withLock { state -> Bool in
          if state.fired || Task.isCancelled { return true }
          state.waiters[id] = continuation
          return false
        }
        if now { continuation.resume() }
      }
    } onCancel: {
      let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
      waiter?.resume()
    }
  }
}

/// What a group's services tell it, in the order it happened: one queue that the group
/// alone reads, so that starting, running and stopping each wait on one thing.
final class ServiceEvents: Sendable {
  enum Event: Sendable {
    /// Service `index` called `ready`.
    case ready(Int)
    /// Service `index`'s `run` returned (nil) or threw.
    case ended(Int, (any Error)?)
    /// The shutdown trigger fired (SIGTERM or SIGINT).
    case shutdown
    /// The drain deadline passed.
    case deadline
  }

  private let state = Mutex<(queued: [Event], waiter: CheckedContinuation<Event, Never>?)>(([], nil))

  func post(_ event: Event) {
    let waiter = state.withLock { state -> CheckedContinuation<Event, Never>? in
      guard let waiter = state.waiter else {
        state.queued.append(event)
        return nil
      }
      state.waiter = nil
      return waiter
    }
    waiter?.resume(returning: event)
  }

  /// The next event; one reader at a time.
  func next() async -> Event {
    await withCheckedContinuation { continuation in
      let queued = state.withLock { state -> Event? in
        if !state.queued.isEmpty { return state.queued.removeFirst() }
        state.waiter = continuation
        return nil
      }
      if let queued { continuation.resume(returning: queued) }
    }
  }
}
