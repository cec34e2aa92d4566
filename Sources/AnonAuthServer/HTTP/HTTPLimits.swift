/// The HTTP/1.1 transport's fixed bounds on a request head (docs/protocol.md §11). They
/// are far above what any Firebase SDK, browser or curl sends (a few hundred bytes and a
/// dozen headers), and low enough that a connection's unfinished head costs little.
/// The body's bound is not here: it is the native frame limit
/// (`maxUnauthenticatedFrameSize`, or `maxFrameSize` for a request the application admits).
public enum HTTPLimits {
  /// The request line, CRLF excluded; longer is answered 414.
  public static let maxRequestLineBytes = 8 * 1024
  /// The whole head, request line and final blank line included; larger is answered 431.
  public static let maxHeadBytes = 16 * 1024
  /// Header fields in one head; more is answered 431.
  public static let maxHeaderCount = 64
}
