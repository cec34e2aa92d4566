/// How the transport must treat one parsed request: the parts of its head that are
/// about framing and the connection, not about the application.
@_spi(Fuzzing) public struct HTTPRequestFraming: Equatable, Sendable {
  /// The `Content-Length` (0 without one).
  public var contentLength: Int
  /// Whether the connection may carry another request after this one's reply: HTTP/1.1
  /// without `Connection: close`. HTTP/1.0 is answered and closed.
  public var keepAlive: Bool
  /// `Expect: 100-continue` with a body to come: the client waits for `100 Continue`.
  public var expectsContinue: Bool
}

/// A strict, bounded and incremental HTTP/1.1 request parser: bytes in as they arrive,
/// requests out one at a time. Pure: no I/O, no clock. Only `Content-Length` frames a
/// body; every ambiguity a proxy in front could read differently (smuggling) is refused
/// rather than guessed at (docs/protocol.md §11).
///
/// Use: `append` bytes, then call `next` until it says `.needMore`. After `.head`, call
/// `admitBody(limit:)` (the body's limit may depend on the head) before `next` again.
@_spi(Fuzzing) public struct HTTPRequestParser: Sendable {
  @_spi(Fuzzing) public enum Step: Sendable {
    /// Nothing complete yet; `hasPartialRequest` says whether a request has begun.
    case needMore
    /// A head was parsed; its body (if any) is not read until `admitBody`.
    case head(HTTPRequest, HTTPRequestFraming)
    /// A whole request, body included.
    case request(HTTPRequest, HTTPRequestFraming)
  }

  private enum State: Sendable {
    case head
    case awaitingAdmission(HTTPRequest, HTTPRequestFraming)
    case body(HTTPRequest, HTTPRequestFraming)
    case failed(HTTPTransportError)
  }

  private var buffer: [UInt8] = []
  private var start = 0
  private var state = State.head
  /// How far from `start` the head being received has been checked.
  private var scanOffset = 0
  /// Where its request line ends (from `start`), once its CRLF has been seen.
  private var requestLineEnd: Int?

  public init() {}

  /// Bytes held and not yet handed out in a request (what the receive budget charges).
  public var bufferedBytes: Int { buffer.count - start }

  /// Whether a request has begun and is not complete: the partial-request timeout runs.
  public var hasPartialRequest: Bool {
    switch state {
    case .head: return bufferedBytes > 0
    case .awaitingAdmission, .body: return true
    case .failed: return false
    }
  }

  /// Whether the body of the head last returned is still to come (to answer
  /// `100 Continue` only when the client is actually waiting for it).
  public var awaitsBodyBytes: Bool {
    if case .body(_, let framing) = state { return bufferedBytes < framing.contentLength }
    return false
  }

  /// Adds received bytes; dropped after an error (nothing more will be parsed).
  public mutating func append<Bytes: Sequence<UInt8>>(_ bytes: Bytes) {
    if case .failed = state { return }
    if start > 0 && start * 2 >= buffer.count {
      buffer.removeSubrange(0..<start)
      start = 0
    }
    buffer.append(contentsOf: bytes)
  }

  /// Accepts or refuses the body of the head `next` last returned: over `limit` bytes is
  /// 413, decided from `Content-Length` before a byte of the body is read.
  public mutating func admitBody(limit: Int) throws(HTTPTransportError) {
    guard case .awaitingAdmission(let request, let framing) = state else { return }
    guard framing.contentLength <= limit else {
      try fail(HTTPTransportError(413, "the request body is over \(limit) bytes"))
    }
    state = .body(request, framing)
  }

  /// The next step; after an error every later call throws the same error.
  public mutating func next() throws(HTTPTransportError) -> Step {
    switch state {
    case .failed(let error):
      throw error
    case .awaitingAdmission:
      return .needMore
    case .body(var request, let framing):
      guard bufferedBytes >= framing.contentLength else { return .needMore }
      request.body = Array(buffer[start..<(start + framing.contentLength)])
      consume(framing.contentLength)
      state = .head
      return .request(request, framing)
    case .head:
      guard let (request, framing) = try parseHead() else { return .needMore }
      if framing.contentLength == 0 {
        state = .head
        return .request(request, framing)
      }
      state = .awaitingAdmission(request, framing)
      return .head(request, framing)
    }
  }

  private mutating func consume(_ count: Int) {
    start += count
    if start == buffer.count {
      buffer.removeAll(keepingCapacity: buffer.capacity <= 64 * 1024)
      start = 0
    }
  }

  private mutating func fail(_ error: HTTPTransportError) throws(HTTPTransportError) -> Never {
    state = .failed(error)
    buffer = []
    start = 0
    throw error
  }

  // MARK: Head

  private static let cr: UInt8 = 13
  private static let lf: UInt8 = 10

  /// Parses a complete head, or returns nil while it is incomplete and within its
  /// limits. Each byte is checked once however the head is split into reads (a peer
  /// sending a byte at a time costs no rescans): `scanOffset` is where the last call
  /// stopped, from `start`.
  private mutating func parseHead() throws(HTTPTransportError) -> (HTTPRequest, HTTPRequestFraming)? {
    if scanOffset == 0 {
      // Empty lines before a request line are skipped (RFC 9112 §2.2): some clients
      // end a body with an extra CRLF.
      while bufferedBytes >= 2 && buffer[start] == Self.cr && buffer[start + 1] == Self.lf { consume(2) }
      requestLineEnd = nil
    }
    var i = start + scanOffset
    defer { scanOffset = i - start }
    while i < buffer.count {
      switch buffer[i] {
      case 0:
        try fail(.badRequest("NUL in the request head"))
      case Self.lf:
        try fail(.badRequest("bare LF in the request head"))
      case Self.cr:
        guard i + 1 < buffer.count else { return nil }
        guard buffer[i + 1] == Self.lf else { try fail(.badRequest("bare CR in the request head")) }
        if i + 2 - start > HTTPLimits.maxHeadBytes {
          try fail(HTTPTransportError(431, "the request head is over \(HTTPLimits.maxHeadBytes) bytes"))
        }
        if requestLineEnd == nil {
          // A request line is refused as soon as it is complete, so that garbage or an
          // HTTP/0.9 request is answered instead of waiting for a blank line.
          requestLineEnd = i - start
          do throws(HTTPTransportError) {
            _ = try Self.requestLine(buffer[start..<i])
          } catch {
            try fail(error)
          }
        } else if i - 2 >= start && buffer[i - 2] == Self.cr && buffer[i - 1] == Self.lf {
          let parsed: (HTTPRequest, HTTPRequestFraming)
          do throws(HTTPTransportError) {
            parsed = try Self.parse(head: buffer[start..<(i - 2)])
          } catch {
            try fail(error)
          }
          consume(i + 2 - start)
          i = start
          return parsed
        }
        i += 2
      default:
        if requestLineEnd == nil && i - start >= HTTPLimits.maxRequestLineBytes {
          try fail(
            HTTPTransportError(414, "the request line is over \(HTTPLimits.maxRequestLineBytes) bytes"))
        }
        if i + 1 - start > HTTPLimits.maxHeadBytes {
          try fail(HTTPTransportError(431, "the request head is over \(HTTPLimits.maxHeadBytes) bytes"))
        }
        i += 1
      }
    }
    return nil
  }

  /// Parses `head` (the bytes before the blank line) into a request and its framing.
  private static func parse(head: ArraySlice<UInt8>) throws(HTTPTransportError) -> (
    HTTPRequest, HTTPRequestFraming
  ) {
    var lines: [ArraySlice<UInt8>] = []
    var lineStart = head.startIndex
    var i = head.startIndex
    while i < head.endIndex {
      if head[i] == cr {
        lines.append(head[lineStart..<i])
        i += 2
        lineStart = i
      } else {
        i += 1
      }
    }
    lines.append(head[lineStart..<head.endIndex])
    guard lines[0].count <= HTTPLimits.maxRequestLineBytes else {
      throw HTTPTransportError(414, "the request line is over \(HTTPLimits.maxRequestLineBytes) bytes")
    }
    guard lines.count - 1 <= HTTPLimits.maxHeaderCount else {
      throw HTTPTransportError(431, "more than \(HTTPLimits.maxHeaderCount) header fields")
    }
    let (method, target, isHTTP11) = try requestLine(lines[0])
    var headers: [(name: String, value: String)] = []
    headers.reserveCapacity(lines.count - 1)
    for line in lines.dropFirst() { headers.append(try headerField(line)) }
    let framing = try framing(headers, isHTTP11: isHTTP11)
    let question = target.firstIndex(of: UInt8(ascii: "?"))
    let path = String(decoding: target[..<(question ?? target.endIndex)], as: UTF8.self)
    let query = question.map { String(decoding: target[($0 + 1)...], as: UTF8.self) } ?? ""
    return (HTTPRequest(method: method, path: path, query: query, headers: headers), framing)
  }

  /// `METHOD SP origin-form SP HTTP/1.x`, single spaces. `*` is the only other target
  /// (for `OPTIONS *`); absolute-form is for proxies, which this is not.
  private static func requestLine(_ line: ArraySlice<UInt8>) throws(HTTPTransportError) -> (
    String, ArraySlice<UInt8>, Bool
  ) {
    let parts = line.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
    guard parts.count == 3 else { throw .badRequest("malformed request line") }
    let method = parts[0]
    let target = parts[1]
    let version = parts[2]
    guard !method.isEmpty, method.allSatisfy(isTokenByte) else { throw .badRequest("malformed method") }
    guard let first = target.first,
      first == UInt8(ascii: "/") || (target.count == 1 && first == UInt8(ascii: "*")),
      target.allSatisfy({ (0x21...0x7e).contains($0) })
    else { throw .badRequest("malformed request target") }
    let isHTTP11: Bool
    switch String(decoding: version, as: UTF8.self) {
    case "HTTP/1.1": isHTTP11 = true
    case "HTTP/1.0": isHTTP11 = false
    default:
      let v = Array(version)
      if v.count == 8, v.starts(with: Array("HTTP/".utf8)), v[6] == UInt8(ascii: "."),
        isDigit(v[5]), isDigit(v[7])
      {
        throw HTTPTransportError(505, "only HTTP/1.1 and HTTP/1.0 are served")
      }
      throw .badRequest("malformed HTTP version")
    }
    return (String(decoding: method, as: UTF8.self), target, isHTTP11)
  }

  /// `name: value`: a token name directly followed by the colon (whitespace before it is
  /// refused, RFC 9112 §5.1), a value of visible bytes, spaces and tabs, trimmed. A
  /// line that begins with whitespace (obs-fold) is refused.
  private static func headerField(_ line: ArraySlice<UInt8>) throws(HTTPTransportError) -> (
    name: String, value: String
  ) {
    if let first = line.first, first == UInt8(ascii: " ") || first == UInt8(ascii: "\t") {
      throw .badRequest("obsolete line folding in a header")
    }
    guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else {
      throw .badRequest("a header line without a colon")
    }
    let name = line[line.startIndex..<colon]
    guard !name.isEmpty, name.allSatisfy(isTokenByte) else { throw .badRequest("malformed header name") }
    var value = line[(colon + 1)...]
    while let b = value.first, b == 0x20 || b == 0x09 { value.removeFirst() }
    while let b = value.last, b == 0x20 || b == 0x09 { value.removeLast() }
    guard value.allSatisfy({ $0 == 0x09 || $0 >= 0x20 && $0 != 0x7f }) else {
      throw .badRequest("a control character in a header value")
    }
    // The name is token bytes, all ASCII: lowercased byte by byte, as `lowercased()`
    // would, without its walk of Unicode's case tables.
    let lowerName = String(unsafeUninitializedCapacity: name.count) { buffer in
      for (offset, byte) in name.enumerated() {
        buffer[offset] = (0x41...0x5a).contains(byte) ? byte | 0x20 : byte
      }
      return name.count
    }
    return (lowerName, String(decoding: value, as: UTF8.self))
  }

  /// The framing rules: `Content-Length` only, once, digits only; any
  /// `Transfer-Encoding` is 501 (400 next to a `Content-Length`); HTTP/1.1 needs exactly
  /// one `Host`.
  private static func framing(
    _ headers: [(name: String, value: String)], isHTTP11: Bool
  ) throws(HTTPTransportError) -> HTTPRequestFraming {
    var lengths: [String] = []
    var hasTransferEncoding = false
    var hosts = 0
    var close = !isHTTP11
    var expect: String?
    for (name, value) in headers {
      switch name {
      case "content-length": lengths.append(value)
      case "transfer-encoding": hasTransferEncoding = true
      case "host": hosts += 1
      case "connection":
        if value.lowercased().split(separator: ",").contains(where: { trimmed($0) == "close" }) {
          close = true
        }
      case "expect": expect = value.lowercased()
      default: break
      }
    }
    if hasTransferEncoding {
      if !lengths.isEmpty { throw .badRequest("both Content-Length and Transfer-Encoding") }
      throw HTTPTransportError(501, "Transfer-Encoding is not supported; send Content-Length")
    }
    guard lengths.count <= 1 else { throw .badRequest("more than one Content-Length") }
    var length = 0
    if let text = lengths.first {
      guard !text.isEmpty, text.utf8.allSatisfy(isDigit) else {
        throw .badRequest("malformed Content-Length")
      }
      // More digits than any limit can take: saturate instead of overflowing, it is 413.
      length = text.utf8.count > 18 ? Int.max : Int(text) ?? Int.max
    }
    if isHTTP11 && hosts != 1 { throw .badRequest("an HTTP/1.1 request needs exactly one Host") }
    if let expect, expect != "100-continue" {
      throw HTTPTransportError(417, "only Expect: 100-continue is supported")
    }
    return HTTPRequestFraming(
      contentLength: length, keepAlive: !close, expectsContinue: expect != nil && isHTTP11 && length > 0)
  }

  private static func isDigit(_ b: UInt8) -> Bool { (0x30...0x39).contains(b) }

  /// `text` without leading and trailing spaces and tabs.
  private static func trimmed(_ text: Substring) -> Substring {
    var text = text
    while let c = text.first, c == " " || c == "\t" { text.removeFirst() }
    while let c = text.last, c == " " || c == "\t" { text.removeLast() }
    return text
  }

  /// RFC 9110 `tchar`.
  private static func isTokenByte(_ b: UInt8) -> Bool {
    switch b {
    case 0x30...0x39, 0x41...0x5a, 0x61...0x7a: return true
    case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
      UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
      UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
      return true
    default: return false
    }
  }
}
