/// A part that starts with one call and stops with another (a listener, the store, a
/// pool): the common case, declared in one line of `Daemon.run`.
struct PartService<Started: Sendable>: Service {
  let name: String
  let start: @Sendable () async throws -> Started
  let stop: @Sendable (Started) async -> Void

  /// - Parameters:
  ///   - start: brings the part up; what it returns is handed to the services after it.
  ///   - stop: the graceful stop; when the drain deadline has passed it runs in a cancelled
  ///     task, and a part that waits (the RPC server's grace) cuts its wait short.
  init(
    _ name: String, start: @escaping @Sendable () async throws -> Started,
    stop: @escaping @Sendable (Started) async -> Void
  ) {
    self.name = name
    self.start = start
    self.stop = stop
  }

  func run(_ context: ServiceContext<Started>) async throws {
    let started = try await start()
    context.ready(started)
    await context.shutdownRequested()
    await stop(started)
  }
}

/// A background loop (the clean-up and mail workers, the cluster sync): ready at once,
/// it runs `body` in a task of the group's until the group stops it, then cancels that
/// task. The stop waits for the loop to end, or for the drain deadline: a loop still busy
/// then (a mail relay that does not answer) is left to end on its own, as the process
/// exits.
struct WorkerService: Service {
  let name: String
  /// Loops until its task is cancelled.
  let body: @Sendable () async -> Void

  init(_ name: String, body: @escaping @Sendable () async -> Void) {
    self.name = name
    self.body = body
  }

  func run(_ context: ServiceContext<Void>) async {
    let ended = ShutdownTrigger()
    let loop = Task {
      await body()
      ended.fire()
    }
    context.ready()
    await context.shutdownRequested()
    loop.cancel()
    await ended.wait()
  }
}
