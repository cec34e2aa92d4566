/// One SMTP reply (RFC 5321 §4.2): a three-digit code and its text lines, the last line
/// marked by a space after the code, the others by a hyphen.
public struct SMTPReply: Sendable, Equatable {
  public var code: Int
  /// Each line's text after the code and its separator.
  public var lines: [String]

  public init(code: Int, lines: [String]) {
    self.code = code
    self.lines = lines
  }

  /// 2xx and 3xx: the command went through (3xx: send what it asks for).
  public var isPositive: Bool { (200..<400).contains(code) }
  /// 4xx: try again later; 5xx: do not.
  public var isTransient: Bool { (400..<500).contains(code) }

  /// The EHLO keywords (first word of each line after the greeting line), uppercased,
  /// with their parameters: `["STARTTLS": [], "AUTH": ["PLAIN", "LOGIN"], ...]`.
  public var extensions: [String: [String]] {
    var out: [String: [String]] = [:]
    for line in lines.dropFirst() {
      let words = line.split(separator: " ").map { $0.uppercased() }
      guard let keyword = words.first else { continue }
      out[keyword] = Array(words.dropFirst())
    }
    return out
  }

  /// The reply as one line for a log or an error: "550 5.1.1 no such user".
  public var summary: String {
    "\(code) " + lines.joined(separator: " / ").prefix(300)
  }
}

/// Reads SMTP replies out of a byte stream: feed it what the connection read, take
/// complete replies. Bounded: a line over `maxLineBytes` or a reply over `maxLines`
/// lines is an error (a server is not trusted to be short), as is a line without a
/// three-digit code, a separator other than space or hyphen, or a continuation line
/// whose code differs from the first line's.
public struct SMTPReplyParser: Sendable {
  public enum Failure: Error, Equatable, Sendable {
    case lineTooLong
    case tooManyLines
    case malformed(String)
  }

  public let maxLineBytes: Int
  public let maxLines: Int
  private var buffer: [UInt8] = []
  private var pending: (code: Int, lines: [String])?

  public init(maxLineBytes: Int = 2048, maxLines: Int = 200) {
    self.maxLineBytes = maxLineBytes
    self.maxLines = maxLines
  }

  /// Adds bytes the connection read.
  public mutating func append(_ bytes: some Sequence<UInt8>) {
    buffer.append(contentsOf: bytes)
  }

  /// A line's text: UTF-8 as it came (SMTPUTF8 servers send it), or, when it is not valid
  /// UTF-8, its ASCII with every other byte as "?", so the text is never longer than the
  /// bytes (a lossy decode would put three bytes of U+FFFD for each bad one, past the
  /// line bound; found by the `smtp-reply` fuzz target).
  static func text(_ bytes: ArraySlice<UInt8>) -> String {
    let decoded = String(decoding: bytes, as: UTF8.self)
    if decoded.utf8.count == bytes.count { return decoded }
    return String(decoding: bytes.map { $0 < 0x80 ? $0 : 0x3F }, as: UTF8.self)
  }

  /// The next complete reply, nil when more bytes are needed.
  public mutating func next() throws(Failure) -> SMTPReply? {
    while let newline = buffer.firstIndex(of: 0x0A) {
      var line = Array(buffer[..<newline])
      buffer.removeSubrange(...newline)
      if line.last == 0x0D { line.removeLast() }
      guard line.count <= maxLineBytes else { throw .lineTooLong }
      guard line.count >= 3, line[0..<3].allSatisfy({ (0x30...0x39).contains($0) }),
        (0x32...0x35).contains(line[0])
      else {
        throw .malformed("a reply line does not start with a code")
      }
      let code = Int(line[0] - 0x30) * 100 + Int(line[1] - 0x30) * 10 + Int(line[2] - 0x30)
      let separator: UInt8 = line.count > 3 ? line[3] : 0x20
      guard separator == 0x20 || separator == 0x2D else {
        throw .malformed("a reply line has no space or hyphen after its code")
      }
      let text = line.count > 4 ? Self.text(line[4...]) : ""
      var reply = pending ?? (code, [])
      guard reply.code == code else { throw .malformed("a continuation line changes the code") }
      reply.lines.append(text)
      guard reply.lines.count <= maxLines else { throw .tooManyLines }
      if separator == 0x2D {
        pending = reply
        continue
      }
      pending = nil
      return SMTPReply(code: reply.code, lines: reply.lines)
    }
    guard buffer.count <= maxLineBytes + 2 else { throw .lineTooLong }
    return nil
  }
}
