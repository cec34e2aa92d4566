/// Why an outbound HTTPS request failed. Descriptions name the host only, never the path
/// or query: those carry access tokens (Facebook's `debug_token`) that must not reach a
/// log line.
public enum HTTPClientError: Error, Equatable, Sendable, CustomStringConvertible {
  /// Not an `https://host[:port]/path` URL.
  case badURL
  /// getaddrinfo found no address.
  case resolve(host: String)
  /// No address of the host accepted a connection.
  case connect(host: String)
  /// The handshake or certificate check failed (wrong CA, wrong name, expired).
  case tls(host: String, detail: String)
  /// The whole request did not finish within its deadline.
  case timeout(host: String)
  /// The response is not well-formed HTTP/1.1.
  case malformedResponse(String)
  /// The response head or body is larger than allowed.
  case tooLarge
  /// Too many requests are waiting for a thread.
  case overloaded
  /// The connection broke.
  case io(host: String, detail: String)

  public var description: String {
    switch self {
    case .badURL: "not an https URL"
    case .resolve(let host): "cannot resolve \(host)"
    case .connect(let host): "cannot connect to \(host)"
    case .tls(let host, let detail): "TLS with \(host) failed: \(detail)"
    case .timeout(let host): "\(host) did not answer in time"
    case .malformedResponse(let why): "malformed HTTP response: \(why)"
    case .tooLarge: "the HTTP response is too large"
    case .overloaded: "too many outbound requests waiting"
    case .io(let host, let detail): "connection to \(host) failed: \(detail)"
    }
  }
}
