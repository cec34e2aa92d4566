import AnonAuthCrypto

/// A project's OpenID Connect discovery document (OpenID Connect Discovery 1.0 §3), in
/// the shape Google's securetoken issuer publishes for Firebase projects: AnonAuth
/// issues ID tokens and nothing else, so the document names the issuer, its keys and how
/// its tokens are made, and no authorization or token endpoint (there is no OAuth flow
/// to start; a verifier needs none).
enum DiscoveryDocument {
  /// The claims every ID token may carry (docs/protocol.md §8), for `claims_supported`.
  static let claims = [
    "iss", "aud", "sub", "iat", "exp", "auth_time", "user_id", "firebase", "provider_id", "email",
    "email_verified",
  ]

  /// - Parameters:
  ///   - issuer: the project's issuer, exactly as its tokens' `iss`.
  ///   - jwksURI: where its keys are published.
  static func json(issuer: String, jwksURI: String) -> [UInt8] {
    JSONValue.object([
      "issuer": .string(issuer),
      "jwks_uri": .string(jwksURI),
      "response_types_supported": .array([.string("id_token")]),
      "subject_types_supported": .array([.string("public")]),
      "id_token_signing_alg_values_supported": .array([.string("RS256")]),
      "claims_supported": .array(claims.map { .string($0) }),
    ]).jsonBytes
  }
}
