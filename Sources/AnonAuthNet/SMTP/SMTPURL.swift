/// Where mail goes: `smtp://host[:port]` (STARTTLS, port 587 by default) or
/// `smtps://host[:port]` (TLS from the first byte, port 465 by default). Nothing else
/// in the URL: credentials come from a file, never from a flag.
public struct SMTPURL: Sendable, Equatable, CustomStringConvertible {
  public enum Security: Sendable, Equatable {
    /// STARTTLS; required unless the host is a loopback address (a local relay).
    case startTLS
    case implicitTLS
  }

  public var security: Security
  public var host: String
  public var port: UInt16

  /// - Throws: a sentence saying what is wrong.
  public init(_ text: String) throws(SMTPURLError) {
    let rest: Substring
    if text.hasPrefix("smtp://") {
      security = .startTLS
      rest = text.dropFirst(7)
    } else if text.hasPrefix("smtps://") {
      security = .implicitTLS
      rest = text.dropFirst(8)
    } else {
      throw SMTPURLError("must start with smtp:// (STARTTLS) or smtps:// (implicit TLS)")
    }
    var authority = rest
    if authority.hasSuffix("/") { authority = authority.dropLast() }
    guard !authority.isEmpty, !authority.contains(where: { "/?#@ ".contains($0) }) else {
      throw SMTPURLError("must be smtp[s]://host[:port] (credentials go in --smtp-credentials-file)")
    }
    var hostPart = authority
    var portText: Substring?
    if authority.hasPrefix("[") {
      guard let close = authority.firstIndex(of: "]") else { throw SMTPURLError("unclosed [ in the host") }
      hostPart = authority[authority.index(after: authority.startIndex)..<close]
      let after = authority[authority.index(after: close)...]
      if after.hasPrefix(":") {
        portText = after.dropFirst()
      } else if !after.isEmpty {
        throw SMTPURLError("unexpected text after the host")
      }
    } else if let colon = authority.lastIndex(of: ":") {
      hostPart = authority[..<colon]
      portText = authority[authority.index(after: colon)...]
    }
    guard !hostPart.isEmpty else { throw SMTPURLError("has no host") }
    host = String(hostPart)
    if let portText {
      guard let port = UInt16(portText), port > 0 else { throw SMTPURLError("has a bad port") }
      self.port = port
    } else {
      port = security == .startTLS ? 587 : 465
    }
  }

  /// Whether the host is this machine (127.0.0.0/8, ::1, localhost): the one place a
  /// relay may be spoken to without TLS.
  public var isLoopback: Bool {
    host == "localhost" || host == "::1" || host.hasPrefix("127.")
  }

  public var description: String {
    let scheme = security == .startTLS ? "smtp" : "smtps"
    let shown = host.contains(":") ? "[\(host)]" : host
    return "\(scheme)://\(shown):\(port)"
  }
}

/// What is wrong with an SMTP URL.
public struct SMTPURLError: Error, Sendable, CustomStringConvertible {
  public let description: String
  init(_ description: String) { self.description = description }
}
