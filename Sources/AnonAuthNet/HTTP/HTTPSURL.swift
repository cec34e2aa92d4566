/// An `https://` URL split into what a request needs. Only https: every outbound call
/// carries tokens or fetches keys that must not be read or changed in transit.
public struct HTTPSURL: Sendable, Equatable {
  /// The host as written (a name, an IPv4 address, or an IPv6 address without brackets).
  public let host: String
  public let port: UInt16
  /// The path and query, "/" at least. A fragment is dropped.
  public let target: String

  /// - Throws: `HTTPClientError.badURL` for another scheme, user info, a bad port, an
  ///   empty host, or characters that do not belong in a request line.
  public init(_ text: String) throws(HTTPClientError) {
    guard text.utf8.count <= 8192, text.lowercased().hasPrefix("https://") else { throw .badURL }
    var rest = Substring(text.dropFirst(8))
    if let hash = rest.firstIndex(of: "#") { rest = rest[..<hash] }
    let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? rest.endIndex
    let authority = rest[..<authorityEnd]
    var target = String(rest[authorityEnd...])
    if target.isEmpty || target.hasPrefix("?") { target = "/" + target }
    guard !authority.contains("@"),
      target.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7f })
    else { throw .badURL }
    var host: Substring
    var portText: Substring?
    if authority.hasPrefix("[") {
      guard let close = authority.firstIndex(of: "]") else { throw .badURL }
      host = authority[authority.index(after: authority.startIndex)..<close]
      let after = authority[authority.index(after: close)...]
      if !after.isEmpty {
        guard after.hasPrefix(":") else { throw .badURL }
        portText = after.dropFirst()
      }
    } else {
      if let colon = authority.firstIndex(of: ":") {
        host = authority[..<colon]
        portText = authority[authority.index(after: colon)...]
      } else {
        host = authority
      }
    }
    guard !host.isEmpty, host.utf8.count <= 253,
      host.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-.:_".contains($0)) })
    else { throw .badURL }
    var port: UInt16 = 443
    if let portText {
      guard let parsed = UInt16(portText), parsed > 0, portText.allSatisfy(\.isNumber) else { throw .badURL }
      port = parsed
    }
    self.host = host.lowercased()
    self.port = port
    self.target = target
  }

  /// The `Host` header: the port only when it is not 443, IPv6 in brackets.
  public var hostHeader: String {
    let name = host.contains(":") ? "[\(host)]" : host
    return port == 443 ? name : "\(name):\(port)"
  }
}
