import Foundation

/// A small HTTP/1.1 client for the few outbound calls the linking worker makes (an
/// identity provider's JWKS, Facebook's Graph API, Apple's token and revoke endpoints):
/// GET and form POST over TLS with certificate and
/// host-name checks, one connection per request, a deadline on the whole request, and a
/// bounded response. Requests run on threads of their own, never on the cooperative pool,
/// so a slow provider delays only the calls that wait for it.
public final class HTTPSClient: Sendable {
  private let context: TLSContext
  private let pool: IOThreadPool
  /// The deadline of each request, from the moment it is queued.
  public let timeoutMs: Int
  public let maxBodyBytes: Int

  /// - Parameters:
  ///   - caFile: PEM CAs to trust; nil: the system's CA store.
  ///   - threads: requests that may be under way at once; more wait (at most 256).
  /// - Throws: `OpenSSLError` when the CA file cannot be used.
  public init(caFile: String?, threads: Int = 8, timeoutMs: Int = 5_000, maxBodyBytes: Int = 1024 * 1024)
    throws(OpenSSLError)
  {
    context = try TLSContext.client(caFile: caFile, applicationProtocol: "http/1.1")
    pool = IOThreadPool(threads: threads, maxQueued: 256, name: "anonauth-out")
    self.timeoutMs = timeoutMs
    self.maxBodyBytes = maxBodyBytes
  }

  /// Fetches `url` with GET.
  /// - Parameter headers: extra request headers (no CR or LF in names or values).
  /// - Returns: the response, whatever its status.
  /// - Throws: `HTTPClientError`; its description never contains the URL's path or query.
  public func get(_ url: String, headers: [String: String] = [:]) async throws(HTTPClientError)
    -> HTTPResponse
  {
    try await send(url, headers: headers, body: nil)
  }

  /// POSTs a `application/x-www-form-urlencoded` body (already encoded) to `url`: the
  /// calls of an OAuth token or revocation endpoint. Never retried here.
  /// - Returns: the response, whatever its status.
  /// - Throws: `HTTPClientError`; its description never contains the URL's path, query
  ///   or the body.
  public func postForm(_ url: String, body: [UInt8], headers: [String: String] = [:])
    async throws(HTTPClientError)
    -> HTTPResponse
  {
    try await send(url, headers: headers, body: body)
  }

  private func send(_ url: String, headers: [String: String], body: [UInt8]?) async throws(HTTPClientError)
    -> HTTPResponse
  {
    let target = try HTTPSURL(url)
    for (name, value) in headers {
      guard !(name + value).contains(where: { $0 == "\r" || $0 == "\n" }) else { throw .badURL }
    }
    let deadline = ContinuousClock.now + .milliseconds(timeoutMs)
    let context = self.context
    let maxBody = maxBodyBytes
    let result: Result<HTTPResponse, HTTPClientError> = await withCheckedContinuation { continuation in
      let accepted = pool.submit(
        deadline: deadline,
        run: {
          continuation.resume(
            returning: Result { () throws(HTTPClientError) -> HTTPResponse in
              try Self.fetch(
                target, headers: headers, body: body, context: context, deadline: deadline, maxBody: maxBody)
            })
        },
        expire: { continuation.resume(returning: .failure(.timeout(host: target.host))) })
      if !accepted { continuation.resume(returning: .failure(.overloaded)) }
    }
    return try result.get()
  }

  /// Stops the threads once queued requests are done.
  public func shutdown() { pool.shutdown() }

  /// A GET, or with `body` a form POST.
  static func requestBytes(_ target: HTTPSURL, headers: [String: String], body: [UInt8]? = nil) -> [UInt8] {
    var head = "\(body == nil ? "GET" : "POST") \(target.target) HTTP/1.1\r\nHost: \(target.hostHeader)\r\n"
    head += "User-Agent: anonauth\r\nAccept: application/json\r\nAccept-Encoding: identity\r\n"
    head += "Connection: close\r\n"
    if let body {
      head += "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: \(body.count)\r\n"
    }
    for (name, value) in headers.sorted(by: { $0.key < $1.key }) { head += "\(name): \(value)\r\n" }
    return Array((head + "\r\n").utf8) + (body ?? [])
  }

  private static func fetch(
    _ target: HTTPSURL, headers: [String: String], body: [UInt8]?, context: TLSContext,
    deadline: ContinuousClock.Instant, maxBody: Int
  ) throws(HTTPClientError) -> HTTPResponse {
    let connection = try OutboundConnection(
      host: target.host, port: target.port, context: context, deadline: deadline)
    try connection.write(requestBytes(target, headers: headers, body: body))
    var parser = HTTPResponseParser(maxBodyBytes: maxBody)
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 16 * 1024, alignment: 1)
    defer { buffer.deallocate() }
    while !parser.isComplete {
      let n = try connection.read(into: buffer)
      if n == 0 { return try parser.finish() }
      try parser.append(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
    }
    return try parser.finish()
  }
}
