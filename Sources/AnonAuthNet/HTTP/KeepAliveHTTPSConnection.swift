import CShims

/// One HTTP/1.1-over-TLS connection kept open for many requests, one at a time, for a
/// load generator (`anonauth bench signup --protocol http`): the server's cost per call is
/// then that of the request, not of a handshake. It is driven synchronously by the one
/// thread that owns it, so it is deliberately not `Sendable`; every request has a
/// deadline of its own. The certificate is checked as `HTTPSClient` checks it.
public final class KeepAliveHTTPSConnection {
  /// The application protocol offered, and required of the server, in the handshake.
  public static let applicationProtocol = "http/1.1"

  private let connection: OutboundConnection
  private let host: String
  private let maxBodyBytes: Int
  private let buffer: UnsafeMutableRawBufferPointer
  /// False once the server closed the connection, said it would, or a request failed:
  /// the owner opens a new one.
  public private(set) var isOpen = true

  /// Connects and completes the handshake within `timeoutMs`.
  /// - Parameter context: a client context offering ALPN `http/1.1`.
  /// - Throws: `HTTPClientError`; `.tls` when the server chose another application protocol.
  public init(host: String, port: UInt16, context: TLSContext, timeoutMs: Int, maxBodyBytes: Int = 1 << 20)
    throws(HTTPClientError)
  {
    self.host = host
    self.maxBodyBytes = maxBodyBytes
    connection = try OutboundConnection(
      host: host, port: port, context: context, deadline: ContinuousClock.now + .milliseconds(timeoutMs))
    buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 16 * 1024, alignment: 1)
    let chosen = connection.negotiatedProtocol
    guard chosen == Self.applicationProtocol else {
      throw .tls(
        host: host, detail: "the server chose ALPN \(chosen ?? "none"), not \(Self.applicationProtocol)")
    }
  }

  deinit { buffer.deallocate() }

  /// Sends one whole request (head and body, as bytes) and reads its response.
  /// - Returns: the response, whatever its status.
  /// - Throws: `HTTPClientError`; the connection is closed after any error.
  public func exchange(_ request: [UInt8], timeoutMs: Int) throws(HTTPClientError) -> HTTPResponse {
    guard isOpen else { throw .io(host: host, detail: "the connection was closed") }
    connection.deadline = ContinuousClock.now + .milliseconds(timeoutMs)
    do {
      try connection.write(request)
      var parser = HTTPResponseParser(maxBodyBytes: maxBodyBytes)
      while !parser.isComplete {
        let n = try connection.read(into: buffer)
        if n == 0 {
          isOpen = false
          return try parser.finish()
        }
        try parser.append(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
      }
      let response = try parser.finish()
      if !Self.keepsConnection(response) { isOpen = false }
      return response
    } catch {
      isOpen = false
      throw error
    }
  }

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
