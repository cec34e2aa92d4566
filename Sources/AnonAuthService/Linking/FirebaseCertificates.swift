import AnonAuthCrypto

/// Where a key set comes from and how it is written: a JWKS (`{"keys":[...]}`, OIDC
/// providers) or Google's x509 map (`{"<kid>": "-----BEGIN CERTIFICATE-----..."}`, the
/// keys of securetoken@system.gserviceaccount.com that sign Firebase ID tokens).
enum KeySetFormat: Sendable {
  case jwks
  case x509

  /// Parses `bytes` in this format.
  /// - Throws: `JWKSError` when it is not such a set or holds no usable key.
  func parse(_ bytes: [UInt8]) throws(JWKSError) -> JWKSet {
    switch self {
    case .jwks: try JWKSet(json: bytes)
    case .x509: try JWKSet(x509JSON: bytes)
    }
  }
}

extension JWKSet {
  /// Parses Google's x509 certificate map: an object of key id to PEM certificate.
  /// Entries that are not RSA certificates of 2048 to 8192 bits are skipped; the
  /// certificates' validity dates are not checked (the Firebase Admin SDKs only take the
  /// key out of them, and Google removes a certificate from the map when it retires it).
  /// - Throws: `JWKSError` when it is not an object or holds no usable certificate.
  @_spi(Fuzzing) public init(x509JSON json: [UInt8]) throws(JWKSError) {
    guard let map = JSONValue(jsonBytes: json)?.objectValue else { throw JWKSError() }
    var entries: [Entry] = []
    for (kid, value) in map.sorted(by: { $0.key < $1.key }).prefix(Self.maximumKeys) {
      guard !kid.isEmpty, let pem = value.stringValue, pem.contains("-----BEGIN CERTIFICATE-----"),
        let key = try? RSAPublicKey(pem: pem)
      else { continue }
      entries.append(Entry(kid: kid, key: .rsa(key)))
    }
    guard !entries.isEmpty else { throw JWKSError() }
    self.init(entries: entries)
  }

  init(entries: [Entry]) {
    self.entries = entries
  }
}
