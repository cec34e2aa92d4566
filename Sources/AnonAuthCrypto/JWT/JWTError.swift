/// Why a compact JWS was refused before any signature check. Verifiers map every case to
/// one "invalid token" answer; the cases exist for tests and debug logs.
public enum JWTError: Error, Equatable, Sendable {
  /// Longer than `JWT.maximumLength` bytes.
  case tooLarge
  /// Not exactly three dot-separated parts.
  case notThreeParts
  /// A part is not canonical unpadded base64url.
  case badBase64URL(JWTPart)
  /// The header or claims are not JSON.
  case notJSON(JWTPart)
  /// The header or claims are JSON but not an object.
  case notAnObject(JWTPart)
  /// The header has no string `alg`.
  case missingAlgorithm
  /// `alg` is `none`: an unsigned token is never accepted.
  case unsignedToken
}

/// The three parts of a compact JWS.
public enum JWTPart: String, Sendable {
  case header, claims, signature
}
