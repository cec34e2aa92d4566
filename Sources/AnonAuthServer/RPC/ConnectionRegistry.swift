import AnonAuthNet

/// The open connections of one event loop, for timeout sweeps and draining.
/// Confined to that loop's thread.
final class ConnectionRegistry {
  let loop: EventLoop
  private var connections: [ObjectIdentifier: ServerConnection] = [:]
  private var sweepTimer: UInt64?
  /// Set by `drainAll`: a connection accepted while shutdown began is drained on arrival
  /// instead of serving on unnoticed until the grace period cuts it.
  private var draining = false

  init(loop: EventLoop) {
    self.loop = loop
  }

  var count: Int { connections.count }

  func add(_ connection: ServerConnection) {
    connections[ObjectIdentifier(connection)] = connection
  }

  /// Whether new connections must be drained as soon as they are added.
  var isDraining: Bool { draining }

  func remove(_ connection: ServerConnection) {
    connections[ObjectIdentifier(connection)] = nil
  }

  /// Checks every connection's timeouts each `intervalNanos`, until `stopSweeping`.
  func startSweeping(intervalNanos: UInt64) {
    sweepTimer = loop.schedule(afterNanos: intervalNanos) { [weak self] in
      guard let self else { return }
      let now = MonotonicClock.now()
      for connection in Array(connections.values) { connection.checkTimeouts(now: now) }
      startSweeping(intervalNanos: intervalNanos)
    }
  }

  func stopSweeping() {
    if let sweepTimer { loop.cancelTimer(sweepTimer) }
    sweepTimer = nil
  }

  func drainAll() {
    draining = true
    for connection in Array(connections.values) { connection.drain() }
  }

  func closeAll() {
    for connection in Array(connections.values) { connection.connection.close() }
  }
}
