import AnonAuthCrypto

/// An identity provider's public keys (RFC 7517), as the OIDC verifier uses them: RSA
/// keys for RS256 and P-256 keys for ES256, by key id. Other keys (encryption keys,
/// other curves and types) are skipped, not errors: providers publish them side by side.
/// Visible to the fuzz target through `@_spi(Fuzzing)`, and to no one else.
@_spi(Fuzzing) public struct JWKSet: Sendable {
  @_spi(Fuzzing) public enum Key: Sendable {
    case rsa(RSAPublicKey)
    case ec(ECP256PublicKey)

    var algorithm: String {
      switch self {
      case .rsa: "RS256"
      case .ec: "ES256"
      }
    }
  }

  struct Entry: Sendable {
    let kid: String?
    let key: Key
  }

  let entries: [Entry]

  /// At most this many keys are read from one set.
  static let maximumKeys = 64

  /// Parses JWKS JSON (`{"keys":[...]}`).
  /// - Throws: `JWKSError` when it is not a key set or holds no usable key.
  @_spi(Fuzzing) public init(json: [UInt8]) throws(JWKSError) {
    guard let keys = JSONValue(jsonBytes: json)?["keys"]?.arrayValue else { throw JWKSError() }
    var entries: [Entry] = []
    for value in keys.prefix(Self.maximumKeys) {
      guard let jwk = value.objectValue else { continue }
      if let use = jwk["use"]?.stringValue, use != "sig" { continue }
      let kid = jwk["kid"]?.stringValue
      let alg = jwk["alg"]?.stringValue
      switch jwk["kty"]?.stringValue {
      case "RSA":
        guard alg == nil || alg == "RS256", let n = jwk["n"]?.stringValue, let e = jwk["e"]?.stringValue,
          let key = try? RSAPublicKey(jwk: n, e: e)
        else { continue }
        entries.append(Entry(kid: kid, key: .rsa(key)))
      case "EC":
        guard alg == nil || alg == "ES256", jwk["crv"]?.stringValue == "P-256",
          let x = jwk["x"]?.stringValue, let y = jwk["y"]?.stringValue,
          let key = try? ECP256PublicKey(jwk: x, y: y)
        else { continue }
        entries.append(Entry(kid: kid, key: .ec(key)))
      default:
        continue
      }
    }
    guard !entries.isEmpty else { throw JWKSError() }
    self.entries = entries
  }

  /// The keys that may have signed a token with this `kid` and `alg`: the key with that
  /// id, or, for a token without one, every key of the algorithm's type.
  @_spi(Fuzzing) public func candidates(kid: String?, algorithm: String) -> [Key] {
    entries.filter { entry in
      entry.key.algorithm == algorithm && (kid == nil || entry.kid == kid)
    }.map(\.key)
  }
}

/// A key set that does not parse or has no RS256/ES256 key.
@_spi(Fuzzing) public struct JWKSError: Error {}
