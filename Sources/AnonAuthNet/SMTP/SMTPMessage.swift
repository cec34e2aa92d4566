import Foundation

/// A mail as it goes after DATA: RFC 5322 headers and a MIME multipart/alternative body
/// (plain text, then HTML), each part UTF-8 in base64 (lines of 76), so no line is long
/// and nothing needs escaping; headers with non-ASCII text are RFC 2047 encoded words.
public struct SMTPMessage: Sendable, Equatable {
  public var from: String
  public var to: String
  public var subject: String
  public var text: String
  public var html: String

  public init(from: String, to: String, subject: String, text: String, html: String) {
    self.from = from
    self.to = to
    self.subject = subject
    self.text = text
    self.html = html
  }

  /// The bytes of the DATA phase, dot-stuffed and ended by `CRLF.CRLF`.
  /// - Parameters:
  ///   - messageID: the unique part of the Message-ID (before the `@`).
  ///   - date: the Date header's time.
  public func data(messageID: String, date: Date, boundary: String) -> [UInt8] {
    let domain = SMTPMessage.address(of: from).split(separator: "@").last.map(String.init) ?? "localhost"
    var lines = [
      "From: \(Self.header(from))",
      "To: \(Self.header(to))",
      "Subject: \(Self.header(subject))",
      "Date: \(Self.rfc5322Date(date))",
      "Message-ID: <\(messageID)@\(domain)>",
      "MIME-Version: 1.0",
    ]
    // Without HTML (a project's text-only template) the mail is the plain text alone.
    if html.isEmpty {
      lines += ["Content-Type: text/plain; charset=UTF-8", "Content-Transfer-Encoding: base64", ""]
      lines += Self.base64Lines(text)
    } else {
      lines += ["Content-Type: multipart/alternative; boundary=\"\(boundary)\"", ""]
      for (type, body) in [("text/plain", text), ("text/html", html)] {
        lines += [
          "--\(boundary)", "Content-Type: \(type); charset=UTF-8", "Content-Transfer-Encoding: base64", "",
        ]
        lines += Self.base64Lines(body)
      }
      lines.append("--\(boundary)--")
    }
    var out: [UInt8] = []
    for line in lines {
      if line.hasPrefix(".") { out.append(0x2E) }
      out.append(contentsOf: Array(line.utf8))
      out.append(contentsOf: [0x0D, 0x0A])
    }
    out.append(contentsOf: Array(".\r\n".utf8))
    return out
  }

  /// `body` as UTF-8 in base64, in lines of 76.
  static func base64Lines(_ body: String) -> [String] {
    let encoded = Data(body.utf8).base64EncodedString()
    var lines: [String] = []
    var index = encoded.startIndex
    while index < encoded.endIndex {
      let end = encoded.index(index, offsetBy: 76, limitedBy: encoded.endIndex) ?? encoded.endIndex
      lines.append(String(encoded[index..<end]))
      index = end
    }
    return lines
  }

  /// A header value: CR and LF dropped (no header injection), and an RFC 2047 encoded
  /// word when it is not all printable ASCII.
  static func header(_ value: String) -> String {
    // By scalar: "\r\n" is one Character, which equals neither "\r" nor "\n".
    var flat = ""
    flat.unicodeScalars.append(contentsOf: value.unicodeScalars.filter { $0 != "\r" && $0 != "\n" })
    if flat.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value < 0x7F }) { return flat }
    return "=?UTF-8?B?\(Data(flat.utf8).base64EncodedString())?="
  }

  /// The address in `Name <a@b>`, or the whole value.
  public static func address(of value: String) -> String {
    if let open = value.lastIndex(of: "<"), let close = value.lastIndex(of: ">"), open < close {
      return String(value[value.index(after: open)..<close])
    }
    return value.trimmingCharacters(in: .whitespaces)
  }

  static func rfc5322Date(_ date: Date) -> String {
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = TimeZone(identifier: "UTC")
    formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss '+0000'"
    return formatter.string(from: date)
  }
}
