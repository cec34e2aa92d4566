import COpenSSL
import CShims

/// An RSA private key that signs ID tokens with RS256 (SHA-256, PKCS#1 v1.5), the
/// algorithm Firebase uses and every JWT library verifies.
///
/// `Sendable` (checked, through `PKeyHandle`): the `EVP_PKEY` is never modified after it is
/// made, and OpenSSL 3 allows concurrent signing with one const key as long as each
/// signature has its own `EVP_MD_CTX`, which `sign` creates per call. So one key can serve
/// every signing thread of the pool.
public final class RSASigningKey: Sendable {
  let key: PKeyHandle
  /// The public half, for JWKS, X.509 certificates and self-checks.
  public let publicKey: RSAPublicKey

  static let allowedBits = 2048...8192

  private init(key: PKeyHandle) throws(CryptoError) {
    guard key.isA("RSA") else { throw CryptoError("not an RSA key") }
    guard Self.allowedBits.contains(key.bits) else {
      throw CryptoError("RSA key of \(key.bits) bits is outside 2048...8192")
    }
    self.key = key
    self.publicKey = try RSAPublicKey(key: PKeyHandle.fromPublicKeyDER(key.publicKeyDER()))
  }

  /// A new key from OpenSSL's CSPRNG; 2048 bits is what Firebase uses and costs a quarter
  /// of 4096 bits per signature.
  /// - Throws: `CryptoError` for sizes outside 2048...8192 or a failed generation.
  public static func generate(bits: Int = 2048) throws(CryptoError) -> RSASigningKey {
    guard allowedBits.contains(bits) else { throw CryptoError("RSA key size \(bits)") }
    ERR_clear_error()
    guard let raw = anonauth_rsa_keygen(UInt32(bits)) else { throw CryptoError("RSA keygen") }
    return try RSASigningKey(key: PKeyHandle(raw))
  }

  /// A key from unencrypted PKCS#8 `PrivateKeyInfo` DER, as `pkcs8DER()` writes it (the
  /// store encrypts that with `AESGCM` itself).
  /// - Throws: `CryptoError` for anything else, trailing bytes, or a non-RSA key.
  public convenience init(pkcs8DER der: [UInt8]) throws(CryptoError) {
    ERR_clear_error()
    let raw: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
      var cursor = buffer.baseAddress
      guard let info = d2i_PKCS8_PRIV_KEY_INFO(nil, &cursor, buffer.count) else { return nil }
      defer { PKCS8_PRIV_KEY_INFO_free(info) }
      guard let cursor, let start = buffer.baseAddress, cursor - start == buffer.count else {
        return nil
      }
      return EVP_PKCS82PKEY(info)
    }
    guard let raw else { throw CryptoError("PKCS#8 private key") }
    try self.init(key: PKeyHandle(raw))
  }

  /// The private key as PKCS#8 `PrivateKeyInfo` DER. The bytes are secret: encrypt them
  /// (`AESGCM.seal`) before they reach disk.
  public func pkcs8DER() throws(CryptoError) -> [UInt8] {
    ERR_clear_error()
    guard let info = EVP_PKEY2PKCS8(key.pointer) else { throw CryptoError("EVP_PKEY2PKCS8") }
    defer { PKCS8_PRIV_KEY_INFO_free(info) }
    guard let der = encodedDER({ i2d_PKCS8_PRIV_KEY_INFO(info, $0) }) else {
      throw CryptoError("i2d_PKCS8_PRIV_KEY_INFO")
    }
    return der
  }

  /// The RS256 signature of `message` (for a JWS, the ASCII of `header.payload`).
  public func sign(_ message: [UInt8]) throws(CryptoError) -> [UInt8] {
    try DigestSignature.sign(message, key: key)
  }
}
