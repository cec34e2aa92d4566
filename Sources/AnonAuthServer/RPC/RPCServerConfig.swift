import AnonAuthNet
import AnonAuthService

/// The transport's limits and timeouts (docs/protocol.md §7). All are settable so
/// that tests can make them short.
public struct RPCServerConfig: Sendable {
  public var listen: SocketAddress
  public var maxFrameSize = 4 * 1024 * 1024
  public var maxConcurrentCallsPerConnection = 128
  public var handshakeTimeoutMs: UInt64 = 10_000
  public var partialFrameTimeoutMs: UInt64 = 30_000
  public var idleTimeoutMs: UInt64 = 300_000
  public var defaultCallTimeoutMs: UInt64 = 30_000
  /// The shortest deadline a call gets: a smaller `timeout_ms` is raised to it (not
  /// refused: a client passing on what is left of its own deadline keeps working, and
  /// hears `DEADLINE_EXCEEDED` a little later). 50 ms is well above what the cheap calls
  /// need (a sign-up signs in a few ms), so a flood of 1 ms deadlines no longer makes
  /// every call expire before it could do anything.
  public var minCallTimeoutMs: UInt64 = 50
  /// The largest frame a connection may send until one of its calls has passed the admin
  /// key check: every AccountService, TokenService and Health request fits in far less
  /// (passwords are at most 4 KiB, provider ID tokens a few KiB); only admin imports
  /// need more. An API key does not raise it: it is public, so it would raise it for
  /// anyone. Set to `maxFrameSize` (or above) to turn it off.
  public var maxUnauthenticatedFrameSize = 64 * 1024
  /// Bytes of partly received frames, and of the payloads of calls whose handler has
  /// not returned, the whole process may hold; a connection whose next bytes would take
  /// it over is told `GoAway` `RESOURCE_EXHAUSTED` and closed (a call whose payload
  /// would is answered `TOO_MANY_CALLS`).
  public var maxBufferedBytes = 256 * 1024 * 1024
  /// The same per peer IP (an IPv6 /64 is one peer); `perIPExempt` peers count only
  /// against `maxBufferedBytes`.
  public var maxBufferedBytesPerIP = 32 * 1024 * 1024
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

  /// The deadline of a call that asked for `requested` ms (0: the default), never under
  /// `minCallTimeoutMs`.
  func effectiveTimeoutMs(requested: UInt32) -> UInt64 {
    let asked = requested == 0 ? defaultCallTimeoutMs : UInt64(requested)
    return max(asked, minCallTimeoutMs)
  }

  /// How often connections are checked for the timeouts above: often enough that a
  /// short test timeout fires on time, never more than once a second.
  var sweepIntervalNanos: UInt64 {
    let shortest = min(handshakeTimeoutMs, partialFrameTimeoutMs, idleTimeoutMs)
    return max(10, min(1000, shortest / 4)) * 1_000_000
  }
}
