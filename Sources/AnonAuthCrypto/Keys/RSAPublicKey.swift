import COpenSSL
import CShims

/// An RSA public key that checks RS256 signatures: ours (published as JWK and X.509) and
/// other issuers' (fetched as JWK or PEM).
public struct RSAPublicKey: Sendable {
  let key: PKeyHandle
  /// Big-endian modulus and exponent without leading zeros, as JWK wants them.
  let modulus: [UInt8]
  let exponent: [UInt8]

  init(key: PKeyHandle) throws(CryptoError) {
    guard key.isA("RSA") else { throw CryptoError("not an RSA public key") }
    guard RSASigningKey.allowedBits.contains(key.bits) else {
      throw CryptoError("RSA key of \(key.bits) bits is outside 2048...8192")
    }
    self.key = key
    self.modulus = try key.bigEndianParameter(OSSL_PKEY_PARAM_RSA_N)
    self.exponent = try key.bigEndianParameter(OSSL_PKEY_PARAM_RSA_E)
  }

  /// A key from a JWK's `n` and `e` (unpadded base64url, big-endian).
  /// - Throws: `CryptoError` for bad base64url, a modulus outside 2048...8192 bits, or a
  ///   key that fails OpenSSL's public-key checks (even modulus, bad exponent).
  public init(jwk n: String, e: String) throws(CryptoError) {
    guard let modulus = Base64URL.decode(n), let exponent = Base64URL.decode(e) else {
      throw CryptoError("JWK n/e is not base64url")
    }
    // Bound the work before OpenSSL sees the numbers: 8192 bits, exponent below 2^256.
    guard (1...1025).contains(modulus.count), (1...32).contains(exponent.count) else {
      throw CryptoError("JWK n/e size")
    }
    ERR_clear_error()
    guard let raw = anonauth_rsa_public_key(modulus, modulus.count, exponent, exponent.count) else {
      throw CryptoError("RSA public key from JWK")
    }
    let handle = PKeyHandle(raw)
    try handle.checkPublic()
    try self.init(key: handle)
  }

  /// A key from PEM: a SubjectPublicKeyInfo (`BEGIN PUBLIC KEY`) or an X.509 certificate
  /// (`BEGIN CERTIFICATE`, as Firebase's x509 endpoint publishes them).
  /// - Throws: `CryptoError` for other PEM, a non-RSA key or a bad size.
  public init(pem: String) throws(CryptoError) {
    let isCertificate = pem.contains("-----BEGIN CERTIFICATE-----")
    let bytes = Array(pem.utf8)
    guard bytes.count <= 64 * 1024 else { throw CryptoError("PEM too large") }
    ERR_clear_error()
    let raw: OpaquePointer? = bytes.withUnsafeBytes { buffer in
      guard let base = buffer.baseAddress, let bio = BIO_new_mem_buf(base, Int32(buffer.count))
      else { return nil }
      defer { BIO_free(bio) }
      if isCertificate {
        guard let certificate = PEM_read_bio_X509(bio, nil, nil, nil) else { return nil }
        defer { X509_free(certificate) }
        return X509_get_pubkey(certificate)
      }
      return PEM_read_bio_PUBKEY(bio, nil, nil, nil)
    }
    guard let raw else { throw CryptoError(isCertificate ? "X.509 PEM" : "public key PEM") }
    try self.init(key: PKeyHandle(raw))
  }

  /// The key as a JWKS entry: kty, alg, use, kid, n, e.
  public func jwk(kid: String) -> [String: String] {
    [
      "kty": "RSA", "alg": "RS256", "use": "sig", "kid": kid,
      "n": Base64URL.encode(modulus), "e": Base64URL.encode(exponent),
    ]
  }

  /// True only when `signature` is a valid RS256 signature of `message` under this key.
  public func verify(signature: [UInt8], message: [UInt8]) -> Bool {
    DigestSignature.verify(signature, message: message, key: key)
  }
}
