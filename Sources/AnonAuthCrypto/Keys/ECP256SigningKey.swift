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
