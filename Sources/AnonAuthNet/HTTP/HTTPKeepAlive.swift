/// What a client that keeps an HTTP/1.1-over-TLS connection open for many requests, one
/// at a time, must know (the load generator's, `anonauth bench signup --protocol http`:
/// the server's cost per call is then that of the request, not of a handshake).
public enum HTTPKeepAlive {
  /// The application protocol offered, and required of the server, in the handshake.
  public static let applicationProtocol = "http/1.1"

  /// Whether the connection can carry another request after `response`: not when the
  /// server said `Connection: close`, nor when the body had no length of its own and so
  /// ran to the end of the connection.
  public static func keepsConnection(_ response: HTTPResponse) -> Bool {
    if let connection = response.headers["connection"],
      connection.split(separator: ",").contains(where: { $0.trimmingSpaces().lowercased() == "close" })
    {
      return false
    }
    if response.status == 204 || response.status == 304 { return true }
    return response.headers["content-length"] != nil || response.headers["transfer-encoding"] != nil
  }
}
