import COpenSSL
import CShims

/// A P-256 private key that makes ES256 signatures, so tests (and a fake OIDC issuer) can
/// produce the tokens the linking worker must accept.
///
/// `Sendable` (checked, through `PKeyHandle`) for the same reason as `RSASigningKey`: the
/// key is never modified and each signature gets its own `EVP_MD_CTX`.
public final class ECP256SigningKey: Sendable {
  let key: PKeyHandle
  /// The public half, for JWKS.
  public let publicKey: ECP256PublicKey

  private init(key: PKeyHandle) throws(CryptoError) {
    var point = [UInt8](repeating: 0, count: 65)
    var length = 0
    ERR_clear_error()
    guard
      EVP_PKEY_get_octet_string_param(
        key.pointer, OSSL_PKEY_PARAM_PUB_KEY, &point, point.count, &length) == 1,
      length == 65, point[0] == 0x04
    else { throw CryptoError("P-256 public point") }
    self.key = key
    self.publicKey = try ECP256PublicKey(x: Array(point[1...32]), y: Array(point[33...64]))
  }

  /// A new key from OpenSSL's CSPRNG.
  public static func generate() throws(CryptoError) -> ECP256SigningKey {
    ERR_clear_error()
    guard let raw = anonauth_ec_p256_keygen() else { throw CryptoError("EC P-256 keygen") }
    return try ECP256SigningKey(key: PKeyHandle(raw))
  }

  /// The ES256 signature of `message` in JWS form: raw `r || s`, 64 bytes.
  public func sign(_ message: [UInt8]) throws(CryptoError) -> [UInt8] {
    let der = try DigestSignature.sign(message, key: key)
    guard let raw = ECDSASignatureFormat.raw(fromDER: der) else {
      throw CryptoError("ECDSA signature format")
    }
    return raw
  }

  /// The public key as a JWKS entry.
  public func jwk(kid: String) -> [String: String] { publicKey.jwk(kid: kid) }
}

extension ECP256SigningKey {
  /// A P-256 key from unencrypted PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`), the form of
  /// the `.p8` file Apple's developer portal hands out for a Sign in with Apple key.
  /// - Throws: `CryptoError` for anything else: other PEM labels, bad base64, trailing
  ///   bytes, or a key that is not P-256.
  public convenience init(pkcs8PEM pem: String) throws(CryptoError) {
    let lines = pem.split(whereSeparator: \.isNewline).map { line in
      String(line.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
    }.filter { !$0.isEmpty }
    guard lines.count >= 3, lines.first == "-----BEGIN PRIVATE KEY-----",
      lines.last == "-----END PRIVATE KEY-----"
    else { throw CryptoError("PKCS#8 PEM private key") }
    var body = lines.dropFirst().dropLast().joined()
    while body.hasSuffix("=") { body.removeLast() }
    guard let der = UnpaddedBase64.standard.decode(Array(body.utf8)) else {
      throw CryptoError("PKCS#8 PEM base64")
    }
    ERR_clear_error()
    let raw: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
      var cursor = buffer.baseAddress
      guard let info = d2i_PKCS8_PRIV_KEY_INFO(nil, &cursor, buffer.count) else { return nil }
      defer { PKCS8_PRIV_KEY_INFO_free(info) }
      guard let cursor, let start = buffer.baseAddress, cursor - start == buffer.count else { return nil }
      return EVP_PKCS82PKEY(info)
    }
    guard let raw else { throw CryptoError("PKCS#8 private key") }
    let handle = PKeyHandle(raw)
    guard handle.isA("EC") else { throw CryptoError("not an EC key") }
    try self.init(key: handle)
  }
}
