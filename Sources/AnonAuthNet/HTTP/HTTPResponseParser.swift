/// Reads one HTTP/1.1 response from the bytes of a connection, incrementally: status
/// line, headers, then a body framed by `Content-Length`, by chunked transfer coding, or
/// by the end of the connection. Head and body are bounded, so a hostile server cannot
/// make the daemon buffer without limit. Interim 1xx responses are skipped.
public struct HTTPResponseParser: Sendable {
  public let maxHeadBytes: Int
  public let maxBodyBytes: Int

  private enum State: Sendable, Equatable {
    case head
    case fixed(remaining: Int)
    case chunkSize
    case chunkData(remaining: Int)
    case chunkDataEnd
    case trailers
    case untilClose
    case done
  }

  private var state = State.head
  private var buffer: [UInt8] = []
  private var status = 0
  private var headers: [String: String] = [:]
  private var body: [UInt8] = []
  /// Bytes of trailer section read so far (bounded like the head).
  private var trailerBytes = 0

  /// - Parameters:
  ///   - maxHeadBytes: the status line and headers (and, separately, the trailers).
  ///   - maxBodyBytes: the body after de-chunking.
  public init(maxHeadBytes: Int = 64 * 1024, maxBodyBytes: Int = 1024 * 1024) {
    self.maxHeadBytes = maxHeadBytes
    self.maxBodyBytes = maxBodyBytes
  }

  /// The response, once the whole of it has been read.
  public var response: HTTPResponse? {
    state == .done ? HTTPResponse(status: status, headers: headers, body: body) : nil
  }

  /// True once the response is complete; later bytes are ignored.
  public var isComplete: Bool { state == .done }

  /// Feeds bytes read from the connection.
  /// - Throws: `HTTPClientError.malformedResponse` or `.tooLarge`.
  public mutating func append(_ bytes: some Collection<UInt8>) throws(HTTPClientError) {
    guard state != .done else { return }
    buffer.append(contentsOf: bytes)
    try advance()
  }

  /// The connection ended: completes a body that runs to the end of the connection.
  /// - Throws: `.malformedResponse` when the response was cut short.
  public mutating func finish() throws(HTTPClientError) -> HTTPResponse {
    if state == .untilClose {
      state = .done
    }
    guard let response else { throw .malformedResponse("the connection closed mid-response") }
    return response
  }

  // MARK: Parsing

  private mutating func advance() throws(HTTPClientError) {
    var index = 0
    defer { buffer.removeFirst(index) }
    while true {
      switch state {
      case .done:
        return
      case .head:
        guard let end = find(crlfcrlf, in: buffer, from: index) else {
          if buffer.count - index > maxHeadBytes { throw .tooLarge }
          return
        }
        if end - index > maxHeadBytes { throw .tooLarge }
        try parseHead(buffer[index..<end])
        index = end + 4
      case .fixed(let remaining):
        guard try takeBody(remaining, at: &index, then: .done, waiting: { .fixed(remaining: $0) }) else {
          return
        }
      case .untilClose:
        try appendBody(buffer[index...])
        index = buffer.count
        return
      case .chunkSize:
        guard let end = find(crlf, in: buffer, from: index) else {
          if buffer.count - index > 1024 { throw .malformedResponse("chunk size line too long") }
          return
        }
        let line = buffer[index..<end]
        index = end + 2
        // Chunk extensions (";name=value") are allowed and ignored.
        guard let size = Self.chunkSize(line) else { throw .malformedResponse("bad chunk size") }
        if size == 0 {
          state = .trailers
        } else {
          guard body.count + size <= maxBodyBytes else { throw .tooLarge }
          state = .chunkData(remaining: size)
        }
      case .chunkData(let remaining):
        guard try takeBody(remaining, at: &index, then: .chunkDataEnd, waiting: { .chunkData(remaining: $0) })
        else { return }
      case .chunkDataEnd:
        guard buffer.count - index >= 2 else { return }
        guard buffer[index] == 13, buffer[index + 1] == 10 else {
          throw .malformedResponse("chunk not followed by CRLF")
        }
        index += 2
        state = .chunkSize
      case .trailers:
        guard let end = find(crlf, in: buffer, from: index) else {
          if trailerBytes + buffer.count - index > maxHeadBytes { throw .tooLarge }
          return
        }
        trailerBytes += end - index + 2
        if trailerBytes > maxHeadBytes { throw .tooLarge }
        let empty = end == index
        index = end + 2
        if empty { state = .done }
      }
    }
  }

  /// Appends up to `remaining` body bytes from `index` on (a `Content-Length` body or one
  /// chunk) and moves `index` past them. When all have come the state is `next` (true);
  /// otherwise the buffer is spent and the state is `waiting` for the rest (false).
  private mutating func takeBody(
    _ remaining: Int, at index: inout Int, then next: State, waiting: (Int) -> State
  ) throws(HTTPClientError) -> Bool {
    let take = min(remaining, buffer.count - index)
    try appendBody(buffer[index..<(index + take)])
    index += take
    guard take == remaining else {
      state = waiting(remaining - take)
      return false
    }
    state = next
    return true
  }

  private mutating func appendBody(_ bytes: ArraySlice<UInt8>) throws(HTTPClientError) {
    guard body.count + bytes.count <= maxBodyBytes else { throw .tooLarge }
    body.append(contentsOf: bytes)
  }

  private mutating func parseHead(_ head: ArraySlice<UInt8>) throws(HTTPClientError) {
    guard let text = String(validating: head, as: UTF8.self) else {
      throw .malformedResponse("the head is not UTF-8")
    }
    let lines = text.split(separator: "\r\n", omittingEmptySubsequences: false)
    guard let statusLine = lines.first else { throw .malformedResponse("no status line") }
    // "HTTP/1.1 200 OK": the reason phrase may be empty or missing.
    let parts = statusLine.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
    guard parts.count >= 2, parts[0] == "HTTP/1.1" || parts[0] == "HTTP/1.0",
      parts[1].count == 3, parts[1].allSatisfy({ $0.isASCII && $0.isNumber }),
      let code = Int(parts[1]), (100...599).contains(code)
    else { throw .malformedResponse("bad status line") }
    var fields: [String: String] = [:]
    for line in lines.dropFirst() {
      guard let colon = line.firstIndex(of: ":"), colon != line.startIndex,
        line[..<colon].allSatisfy({
          $0.isASCII && ($0.isLetter || $0.isNumber || "-_!#$%&'*+.^`|~".contains($0))
        })
      else { throw .malformedResponse("bad header line") }
      let name = line[..<colon].lowercased()
      let value = String(line[line.index(after: colon)...].trimmingSpaces())
      if let existing = fields[name] {
        fields[name] = existing + ", " + value
      } else {
        fields[name] = value
      }
    }
    if (100...199).contains(code) {
      // An interim response (100 Continue, 103 Early Hints): the real one follows.
      guard code != 101 else { throw .malformedResponse("unexpected protocol switch") }
      return
    }
    status = code
    headers = fields
    if code == 204 || code == 304 {
      state = .done
    } else if let coding = fields["transfer-encoding"] {
      guard coding.split(separator: ",").last?.trimmingSpaces().lowercased() == "chunked" else {
        throw .malformedResponse("unsupported transfer coding")
      }
      state = .chunkSize
    } else if let length = fields["content-length"] {
      // Repeated identical values ("5, 5") are allowed; different ones are not.
      let values = Set(length.split(separator: ",").map { $0.trimmingSpaces() })
      guard values.count == 1, let only = values.first, !only.isEmpty, only.count <= 12,
        only.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }), let n = Int(only),
        n >= 0
      else { throw .malformedResponse("bad Content-Length") }
      guard n <= maxBodyBytes else { throw .tooLarge }
      state = n == 0 ? .done : .fixed(remaining: n)
    } else {
      state = .untilClose
    }
  }

  /// The most hex digits a chunk size may have: 8 digits is at most 4 GiB - 1, far
  /// beyond any body limit, and small enough that no sum below overflows.
  static let maxChunkSizeDigits = 8

  /// The size on a chunk-size line: hex digits only (no sign, no "0x", no inner spaces),
  /// optionally followed by spaces/tabs and `;extensions`. Built digit by digit from at
  /// most `maxChunkSizeDigits` digits, so it is non-negative and bounded by construction;
  /// `Int(_:radix:)` would accept "-1" and "+5".
  public static func chunkSize(_ line: ArraySlice<UInt8>) -> Int? {
    let sizePart = line.prefix { $0 != UInt8(ascii: ";") }
    var size = 0
    var digits = 0
    var index = sizePart.startIndex
    while index < sizePart.endIndex, let value = hexValue(sizePart[index]) {
      digits += 1
      guard digits <= maxChunkSizeDigits else { return nil }
      size = size << 4 | value
      index += 1
    }
    guard digits > 0 else { return nil }
    // Only whitespace may follow the digits (before an extension).
    guard sizePart[index...].allSatisfy({ $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }) else {
      return nil
    }
    return size
  }

  private static func hexValue(_ byte: UInt8) -> Int? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): Int(byte - UInt8(ascii: "0"))
    case UInt8(ascii: "a")...UInt8(ascii: "f"): Int(byte - UInt8(ascii: "a")) + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): Int(byte - UInt8(ascii: "A")) + 10
    default: nil
    }
  }

  private let crlf: [UInt8] = [13, 10]
  private let crlfcrlf: [UInt8] = [13, 10, 13, 10]

  private func find(_ needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
    guard haystack.count - start >= needle.count else { return nil }
    var i = start
    while i <= haystack.count - needle.count {
      if haystack[i] == needle[0] {
        var j = 1
        while j < needle.count && haystack[i + j] == needle[j] { j += 1 }
        if j == needle.count { return i }
      }
      i += 1
    }
    return nil
  }
}
