/// Why the HTTP/1.1 transport refused a request before any application saw it. Each is
/// answered with its status and Firebase's error body, and the connection is closed:
/// after a framing error nothing that follows on it can be trusted to be a request.
@_spi(Fuzzing) public struct HTTPTransportError: Error, Equatable, Sendable {
  /// 400, 408, 413, 414, 417, 431, 501 or 505.
  public let status: Int
  public let message: String

  public init(_ status: Int, _ message: String) {
    self.status = status
    self.message = message
  }

  static func badRequest(_ message: String) -> HTTPTransportError { HTTPTransportError(400, message) }
}
