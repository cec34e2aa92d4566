import AnonAuthService

/// Runs the daemon's services: starts them one at a time in the order they are declared
/// (each ready before the next starts), waits for the shutdown trigger, then stops them in
/// reverse order, the whole stop within the drain deadline. When a service fails (throws,
/// or its `run` returns while the group still runs), the group stops the others in the
/// same reverse order and throws `ServiceFailure` naming it.
///
/// Declared by `Daemon.run`; docs/architecture.md ("Start and stop") shows the order. Not
/// `Sendable`: one task (the daemon's) drives it from start to end.
final class ServiceGroup {
  private struct Entry {
    let name: String
    let task: Task<Void, Never>
    let shutdown: ShutdownTrigger
    var ended = false
  }

  private let logger: Logger
  /// Returns when the drain time is over, counted from the start of the stop.
  private let drainDeadline: @Sendable () async -> Void
  private let events = ServiceEvents()
  private var entries: [Entry] = []
  private var failure: ServiceFailure?
  private var stopped = false

  /// - Parameter drainDeadline: returns when the services still stopping must be cut
  ///   short (`--shutdown-grace-ms` after the stop began, in the daemon); called once, when
  ///   the stop begins.
  init(logger: Logger, drainDeadline: @escaping @Sendable () async -> Void) {
    self.logger = logger
    self.drainDeadline = drainDeadline
  }

  /// The daemon's drain deadline: `milliseconds` after the stop begins.
  convenience init(logger: Logger, drainMilliseconds milliseconds: Int) {
    self.init(logger: logger) { try? await Task.sleep(for: .milliseconds(milliseconds)) }
  }

  /// Starts `service` after those already started and returns what it gave `ready`.
  /// - Throws: `ServiceFailure` when it (or one started before it) failed; every service
  ///   started is stopped by then, in reverse order.
  func start<S: Service>(_ service: S) async throws(ServiceFailure) -> S.Started {
    if let failure { throw failure }
    let index = entries.count
    let shutdown = ShutdownTrigger()
    let context = ServiceContext<S.Started>(events: events, index: index, shutdown: shutdown)
    let events = self.events
    let task = Task {
      do {
        try await service.run(context)
        events.post(.ended(index, nil))
      } catch {
        events.post(.ended(index, error))
      }
    }
    entries.append(Entry(name: service.name, task: task, shutdown: shutdown))
    while true {
      switch await events.next() {
      case .ready(index):
        guard let value = context.startedValue else { continue }
        logger.debug("service started", ["service": .string(service.name)])
        return value
      case .ended(let ended, let error):
        await fail(ended, error: error, starting: ended == index)
        throw failure
          ?? ServiceFailure(service: service.name, error: ServiceEndedEarly(), whileStarting: true)
      case .ready, .shutdown, .deadline:
        continue
      }
    }
  }

  /// Waits for `trigger` (the daemon's SIGTERM or SIGINT), or for a service to fail, then
  /// stops every service in reverse order.
  /// - Throws: `ServiceFailure` when a service failed.
  func run(until trigger: @escaping @Sendable () async -> Void) async throws(ServiceFailure) {
    if let failure { throw failure }
    let events = self.events
    let waiter = Task {
      await trigger()
      events.post(.shutdown)
    }
    defer { waiter.cancel() }
    while true {
      switch await events.next() {
      case .shutdown:
        await stop()
        if let failure { throw failure }
        return
      case .ended(let index, let error):
        await fail(index, error: error, starting: false)
        if let failure { throw failure }
        return
      case .ready, .deadline:
        continue
      }
    }
  }

  /// Stops every service started, in reverse order: each is asked to stop and awaited;
  /// once the drain deadline has passed, the ones still stopping (and the ones after them)
  /// are cancelled as they are asked. Safe to call more than once.
  func stop() async {
    guard !stopped else { return }
    stopped = true
    let events = self.events
    let deadline = drainDeadline
    let timer = Task {
      await deadline()
      if !Task.isCancelled { events.post(.deadline) }
    }
    defer { timer.cancel() }
    var deadlinePassed = false
    for position in entries.indices.reversed() {
      let entry = entries[position]
      guard !entry.ended else { continue }
      entry.shutdown.fire()
      if deadlinePassed { entry.task.cancel() }
      while !entries[position].ended {
        switch await events.next() {
        case .ended(let index, let error):
          entries[index].ended = true
          if let error { record(index, error: error, starting: false) }
        case .deadline:
          deadlinePassed = true
          logger.debug("drain deadline passed", ["service": .string(entry.name)])
          entry.task.cancel()
        case .ready, .shutdown:
          continue
        }
      }
      logger.debug("service stopped", ["service": .string(entry.name)])
    }
  }

  private func fail(_ index: Int, error: (any Error)?, starting: Bool) async {
    entries[index].ended = true
    record(index, error: error ?? ServiceEndedEarly(), starting: starting)
    await stop()
  }

  /// Keeps the first failure: it is the group's reason; later ones are only logged.
  private func record(_ index: Int, error: any Error, starting: Bool) {
    let name = entries[index].name
    if !starting {
      logger.error("service failed", ["service": .string(name), "error": .string("\(error)")])
    }
    if failure == nil { failure = ServiceFailure(service: name, error: error, whileStarting: starting) }
  }
}

/// Why a group stopped on its own: the service that failed, with its error.
struct ServiceFailure: Error, CustomStringConvertible {
  let service: String
  let error: any Error
  /// It failed to start (its error is the daemon's start-up error, as thrown).
  let whileStarting: Bool

  var description: String { whileStarting ? "\(error)" : "\(service) failed: \(error)" }
}

/// A service's `run` returned while the group was not stopping it.
struct ServiceEndedEarly: Error, CustomStringConvertible {
  var description: String { "ended before the group stopped it" }
}
