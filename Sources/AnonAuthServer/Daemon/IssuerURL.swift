import AnonAuthNet

/// The address a project's token issuer is named by (`--public-url`), checked once at
/// start: OpenID Connect names an issuer by an `https` URL with no query or fragment, and
/// a verifier compares `iss` with it character for character, so a trailing slash is cut.
enum IssuerURL {
  /// `text` as the issuer base, or nil when it is empty.
  /// - Throws: `ConfigError` when it is not an `https` URL with a host, or has a query,
  ///   a fragment or spaces.
  static func parsePublicURL(_ text: String) throws(ConfigError) -> String? {
    if text.isEmpty { return nil }
    func refuse(_ why: String) -> ConfigError {
      ConfigError("--public-url: \(why), got \"\(text)\"")
    }
    guard text.hasPrefix("https://") else { throw refuse("expected an https:// URL") }
    guard !text.contains(where: { $0 == "?" || $0 == "#" || $0 == " " }) else {
      throw refuse("expected no query, fragment or spaces")
    }
    var base = Substring(text)
    while base.hasSuffix("/") { base = base.dropLast() }
    let host = base.dropFirst("https://".count).prefix { $0 != "/" }
    guard !host.isEmpty else { throw refuse("expected a host after https://") }
    return String(base)
  }

  /// `https://` and the RPC port's bound address, for `--dev`: the self-signed
  /// certificate names localhost and 127.0.0.1, so a wildcard address (0.0.0.0, ::) is
  /// named `localhost`.
  static func dev(rpc address: SocketAddress) -> String {
    let host: String
    if address.host == "0.0.0.0" || address.host == "::" {
      host = "localhost"
    } else if address.isIPv6 {
      host = "[\(address.host)]"
    } else {
      host = address.host
    }
    return "https://\(host):\(address.port)"
  }
}
