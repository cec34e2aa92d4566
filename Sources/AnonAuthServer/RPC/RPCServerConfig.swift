import AnonAuthNet
import AnonAuthService

/// The transport's limits and timeouts (docs/protocol.md §7). All are settable so
/// that tests can make them short; the defaults are the daemon settings' (`NumberSetting`),
/// and the daemon passes its resolved values (`DaemonConfig.rpc`).
public struct RPCServerConfig: Sendable {
  public var listen: SocketAddress
  /// The emulator listener (`--firebase-emulator-listen`): plain HTTP/1.1 on a loopback
  /// address, the same connection code and limits as HTTP on the RPC port; nil: off.
  public var emulatorListen: SocketAddress?
  public var maxFrameSize = NumberSetting.maxFrameSize.defaultInt
  public var maxConcurrentCallsPerConnection = NumberSetting.maxConcurrentCalls.defaultInt
  public var handshakeTimeoutMs = NumberSetting.handshakeTimeoutMs.defaultValue
  public var partialFrameTimeoutMs = NumberSetting.frameTimeoutMs.defaultValue
  public var idleTimeoutMs = NumberSetting.idleTimeoutMs.defaultValue
  public var defaultCallTimeoutMs = NumberSetting.callTimeoutMs.defaultValue
  /// The shortest deadline a call gets: a smaller `timeout_ms` is raised to it (not
  /// refused: a client passing on what is left of its own deadline keeps working, and
  /// hears `DEADLINE_EXCEEDED` a little later). 50 ms is well above what the cheap calls
  /// need (a sign-up signs in a few ms), so a flood of 1 ms deadlines no longer makes
  /// every call expire before it could do anything.
  public var minCallTimeoutMs = NumberSetting.minCallTimeoutMs.defaultValue
  /// The largest frame a connection may send until one of its calls has passed the admin
  /// key check: every AccountService, TokenService and Health request fits in far less
  /// (passwords are at most 4 KiB, provider ID tokens a few KiB); only admin imports
  /// need more. An API key does not raise it: it is public, so it would raise it for
  /// anyone. Set to `maxFrameSize` (or above) to turn it off.
  public var maxUnauthenticatedFrameSize = NumberSetting.maxUnauthenticatedFrameSize.defaultInt
  /// Bytes of partly received frames, and of the payloads of calls whose handler has
  /// not returned, the whole process may hold; a connection whose next bytes would take
  /// it over is told `GoAway` `RESOURCE_EXHAUSTED` and closed (a call whose payload
  /// would is answered `TOO_MANY_CALLS`).
  public var maxBufferedBytes = NumberSetting.maxBufferedBytes.defaultInt
  /// The same per peer IP (an IPv6 /64 is one peer); `perIPExempt` peers count only
  /// against `maxBufferedBytes`.
  public var maxBufferedBytesPerIP = NumberSetting.maxBufferedBytesPerIP.defaultInt
  public var shutdownGraceMs = NumberSetting.shutdownGraceMs.defaultValue
  /// Event-loop threads; each connection lives on one of them.
  public var ioThreads = NumberSetting.ioThreads.defaultInt
  /// Open connections at most; lowered at start to leave `descriptorReserve` of the
  /// descriptor limit free. A connection over it is closed as soon as it is accepted.
  public var maxConnections = NumberSetting.maxConnections.defaultInt
  /// Open connections per peer IP at most, except for peers in `perIPExempt`.
  public var maxConnectionsPerIP = NumberSetting.maxConnectionsPerIP.defaultInt
  /// New connections a second per peer IP (after a burst of `maxConnectionsPerIP`),
  /// except for peers in `perIPExempt`; 0 turns the pacing off.
  public var maxConnectionRatePerIP = NumberSetting.maxConnectionRatePerIP.defaultInt
  /// Call log lines a second (after a burst of twice as many): a client calling unknown
  /// paths as fast as it can must not fill the disk through the log. 0: every line.
  public var maxCallLogLinesPerSecond = NumberSetting.maxCallLogLinesPerSecond.defaultInt
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
