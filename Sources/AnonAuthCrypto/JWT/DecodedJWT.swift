/// A compact JWS split and parsed but not yet trusted: check the signature (`verify`) and
/// then the claims before using anything in it.
public struct DecodedJWT: Sendable, Equatable {
  public let header: [String: JSONValue]
  public let claims: [String: JSONValue]
  /// The claims exactly as the token carries them (decoded from base64url). For a token
  /// this server signed they are already compact JSON with sorted keys, so they can be
  /// handed on without encoding the claims again.
  public let claimsJSON: [UInt8]
  /// The ASCII bytes of `header.payload`, which the signature covers.
  public let signingInput: [UInt8]
  public let signature: [UInt8]

  /// The header's `alg` (decode guarantees it is a string other than `none`).
  public var algorithm: String { header["alg"]?.stringValue ?? "" }

  /// The header's `kid`, which picks the key out of the issuer's JWKS.
  public var keyID: String? { header["kid"]?.stringValue }

  /// True when `alg` is RS256 and the signature is valid under `key`. The algorithm is
  /// pinned by the key type, never taken from the token alone (no algorithm confusion).
  public func verify(with key: RSAPublicKey) -> Bool {
    algorithm == "RS256" && key.verify(signature: signature, message: signingInput)
  }

  /// True when `alg` is ES256 and the raw `r || s` signature is valid under `key`.
  public func verify(with key: ECP256PublicKey) -> Bool {
    algorithm == "ES256" && key.verify(jwsSignature: signature, message: signingInput)
  }
}
