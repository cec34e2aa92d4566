/// The reason of a `GoAway` frame: why the server closes a whole connection (rather than
/// failing one call). Like `Reason`, each exists only as a static below and is described
/// in `ReasonCatalogue.goAwayReasons`, from which docs/reasons.md is generated.
public struct GoAwayReason: Hashable, Sendable, CustomStringConvertible {
  public let name: String

  init(_ name: String) { self.name = name }

  public var description: String { name }

  /// The daemon drains for a graceful stop (SIGTERM or SIGINT).
  public static let shuttingDown = GoAwayReason("SHUTTING_DOWN")
  /// No call and no frame for the idle timeout.
  public static let idleTimeout = GoAwayReason("IDLE_TIMEOUT")
  /// A length prefix over the connection's frame limit.
  public static let frameTooLarge = GoAwayReason("FRAME_TOO_LARGE")
  /// Bytes that are not a frame this side may receive.
  public static let malformedFrame = GoAwayReason("MALFORMED_FRAME")
  /// The connection's next bytes would take the process or its address over the budget
  /// of partly received bytes.
  public static let resourceExhausted = GoAwayReason("RESOURCE_EXHAUSTED")
}
