import COpenSSL
import CShims

/// A P-256 public key that checks ES256 signatures, for OIDC issuers that sign ID tokens
/// with ECDSA (the linking worker fetches their JWKs).
public struct ECP256PublicKey: Sendable {
  let key: PKeyHandle
  /// The affine coordinates, 32 bytes each, as JWK wants them.
  let x: [UInt8]
  let y: [UInt8]

  /// A key from the uncompressed SEC1 point `0x04 || x || y`.
  init(x: [UInt8], y: [UInt8]) throws(CryptoError) {
    guard x.count == 32, y.count == 32 else { throw CryptoError("P-256 coordinates must be 32 bytes") }
    let point = [0x04] + x + y
    ERR_clear_error()
    guard let raw = anonauth_ec_p256_public_key(point, point.count) else {
      throw CryptoError("P-256 public key")
    }
    let handle = PKeyHandle(raw)
    try handle.checkPublic()
    self.key = handle
    self.x = x
    self.y = y
  }

  /// A key from a JWK's `x` and `y` (unpadded base64url, 32 bytes each).
  /// - Throws: `CryptoError` for bad base64url, wrong lengths or a point not on P-256
  ///   (invalid-curve attacks stop here).
  public init(jwk x: String, y: String) throws(CryptoError) {
    guard let xBytes = Base64URL.decode(x), let yBytes = Base64URL.decode(y) else {
      throw CryptoError("JWK x/y is not base64url")
    }
    try self.init(x: xBytes, y: yBytes)
  }

  /// The key as a JWKS entry: kty EC, crv P-256, alg ES256, use, kid, x, y.
  public func jwk(kid: String) -> [String: String] {
    [
      "kty": "EC", "crv": "P-256", "alg": "ES256", "use": "sig", "kid": kid,
      "x": Base64URL.encode(x), "y": Base64URL.encode(y),
    ]
  }

  /// True only when `jwsSignature` is a valid raw `r || s` ES256 signature of `message`.
  /// DER signatures are refused: JWS never uses them, and accepting two encodings would
  /// make tokens malleable.
  public func verify(jwsSignature: [UInt8], message: [UInt8]) -> Bool {
    guard let der = ECDSASignatureFormat.der(fromRaw: jwsSignature) else { return false }
    return DigestSignature.verify(der, message: message, key: key)
  }
}
