import AnonAuthCrypto

/// Decodes the input as a compact JWT and checks its signature against one RSA and one
/// P-256 key, as the token verifier and the OIDC verifier do.
enum JWTFuzz {
  /// Made once per process: key generation is not what is being fuzzed.
  static let keys: (rsa: RSAPublicKey, ec: ECP256PublicKey)? = {
    guard let rsa = try? RSASigningKey.generate(), let ec = try? ECP256SigningKey.generate() else {
      return nil
    }
    return (rsa.publicKey, ec.publicKey)
  }()

  static func run(_ data: [UInt8]) {
    let token = String(decoding: data, as: UTF8.self)
    guard let decoded = try? JWT.decode(token) else { return }
    _ = decoded.algorithm
    _ = decoded.keyID
    if let keys {
      _ = decoded.verify(with: keys.rsa)
      _ = decoded.verify(with: keys.ec)
    }
  }
}
