import AnonAuthNet

/// The open connections of one event loop, for timeout sweeps and draining.
/// Confined to that loop's thread.
final class ConnectionRegistry {
  let loop: EventLoop
  let limiter: ConnectionLimiter
  private var connections: [ObjectIdentifier: any ServedConnection] = [:]
  private var sweepTimer: UInt64?
  /// Set by `drainAll`: a connection accepted while shutdown began is drained on arrival
  /// instead of serving on unnoticed until the grace period cuts it.
  private var draining = false

  init(loop: EventLoop, limiter: ConnectionLimiter) {
    self.loop = loop
    self.limiter = limiter
  }

  var count: Int { connections.count }

  func add(_ connection: any ServedConnection) {
    connections[ObjectIdentifier(connection)] = connection
  }

  /// A connection became another kind (the TLS handshake chose HTTP/1.1): the new one
  /// takes the old one's place, which stays counted in the limits.
  func replace(_ old: any ServedConnection, with new: any ServedConnection) {
    guard connections.removeValue(forKey: ObjectIdentifier(old)) != nil else { return }
    connections[ObjectIdentifier(new)] = new
  }

  /// Whether new connections must be drained as soon as they are added.
  var isDraining: Bool { draining }

  /// Forgets a closed connection and gives its place back to the limits.
  func remove(_ connection: any ServedConnection) {
    guard connections.removeValue(forKey: ObjectIdentifier(connection)) != nil else { return }
    limiter.release(connection.peerHost)
  }

  /// How many connections one loop turn of a sweep looks at. Closing a connection costs
  /// a TLS object and a descriptor; a flood of abandoned handshakes all timing out
  /// together, closed in one turn, held the loop for tens of milliseconds.
  static let sweepSlice = 32

  /// Checks every connection's timeouts each `intervalNanos`, until `stopSweeping`, in
  /// slices of `sweepSlice` per loop turn so that other connections are served between.
  func startSweeping(intervalNanos: UInt64) {
    sweepTimer = loop.schedule(afterNanos: intervalNanos) { [weak self] in
      guard let self else { return }
      sweep(Array(connections.values)[...]) { [weak self] in
        self?.startSweeping(intervalNanos: intervalNanos)
      }
    }
  }

  /// Each slice reads the clock itself: a connection active since the sweep began must
  /// not look older than it is.
  private func sweep(_ pending: ArraySlice<any ServedConnection>, then next: @escaping () -> Void) {
    guard sweepTimer != nil else { return }  // stopped meanwhile
    let now = MonotonicClock.now()
    let slice = pending.prefix(Self.sweepSlice)
    for connection in slice { connection.checkTimeouts(now: now) }
    let rest = pending.dropFirst(slice.count)
    if rest.isEmpty {
      next()
    } else {
      loop.runOnNextIteration { [weak self] in self?.sweep(rest, then: next) }
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
    for connection in Array(connections.values) { connection.closeNow() }
  }
}
