/// Why a byte stream stopped being a valid sequence of frames. Each is a connection
/// error: the server answers with a `GoAway` carrying `reason` and closes.
public enum FrameError: Error, Hashable, Sendable {
  /// A length prefix of 0 (docs/protocol.md §2: zero-length frames are malformed).
  case emptyFrame
  /// A length prefix over the configured maximum; nothing of the body is read.
  case tooLarge(length: UInt32, limit: Int)
  /// The body does not parse as a `Frame`, its kind is unset, or the kind is not
  /// one this side may receive.
  case malformed(String)
  /// The connection's next bytes would take the process or its peer address over the
  /// budget of partly received bytes (a server limit, not the peer's framing).
  case overBudget

  /// The `GoAway` reason for this error.
  public var goAway: GoAwayReason {
    switch self {
    case .tooLarge: .frameTooLarge
    case .emptyFrame, .malformed: .malformedFrame
    case .overBudget: .resourceExhausted
    }
  }

  /// The name of `goAway`, as the frame carries it.
  public var goAwayReason: String { goAway.name }
}
