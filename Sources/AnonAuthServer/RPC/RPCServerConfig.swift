import AnonAuthNet
import AnonAuthService

/// The transport's limits and timeouts (PROTOCOL.md section 1). All are settable so
/// that tests can make them short.
public struct RPCServerConfig: Sendable {
  public var listen: SocketAddress
  public var maxFrameSize = 4 * 1024 * 1024
  public var maxConcurrentCallsPerConnection = 128
  public var handshakeTimeoutMs: UInt64 = 10_000
  public var partialFrameTimeoutMs: UInt64 = 30_000
  public var idleTimeoutMs: UInt64 = 300_000
  public var defaultCallTimeoutMs: UInt64 = 30_000
  public var shutdownGraceMs: UInt64 = 20_000
  /// Event-loop threads; each connection lives on one of them.
  public var ioThreads = 1
  /// Open connections at most; lowered at start to leave `descriptorReserve` of the
  /// descriptor limit free. A connection over it is closed as soon as it is accepted.
  public var maxConnections = 10_000
  /// Open connections per peer IP at most, except for peers in `perIPExempt`.
  public var maxConnectionsPerIP = 256
  /// New connections a second per peer IP (after a burst of `maxConnectionsPerIP`),
  /// except for peers in `perIPExempt`; 0 turns the pacing off.
  public var maxConnectionRatePerIP = 64
  /// Peers the per-IP limit does not apply to (the trusted proxies).
  public var perIPExempt: [IPNetwork] = []

  public init(listen: SocketAddress) {
    self.listen = listen
  }

  /// How often connections are checked for the timeouts above: often enough that a
  /// short test timeout fires on time, never more than once a second.
  var sweepIntervalNanos: UInt64 {
    let shortest = min(handshakeTimeoutMs, partialFrameTimeoutMs, idleTimeoutMs)
    return max(10, min(1000, shortest / 4)) * 1_000_000
  }
}
