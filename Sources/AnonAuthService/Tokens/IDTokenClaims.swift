import AnonAuthCrypto
import AnonAuthStore

/// The claims of an ID token in Firebase's shape (docs/protocol.md §8).
enum IDTokenClaims {
  /// Names custom claims may not use: the registered and Firebase-reserved ones.
  static let reserved: Set<String> = [
    "iss", "aud", "sub", "iat", "exp", "nbf", "jti", "nonce", "azp", "acr", "amr", "cnf", "auth_time",
    "firebase", "at_hash", "c_hash",
  ]

  static func make(
    issuerPrefix: String, project: ProjectRecord, account: AccountRecord, identities: [IdentityRecord],
    signInProvider: String, authTime: Int64, issuedAt: Int64
  ) -> [String: JSONValue] {
    var claims: [String: JSONValue] = [:]
    // Custom claims first, so that nothing reserved can be overwritten by them.
    if !account.customClaimsJSON.isEmpty,
      let custom = JSONValue(lenientJSONBytes: Array(account.customClaimsJSON.utf8))?.objectValue
    {
      for (key, value) in custom where !reserved.contains(key) { claims[key] = value }
    }
    var ids: [String: JSONValue] = [:]
    if let email = account.email { ids["email"] = .array([.string(email)]) }
    for identity in identities where identity.providerID != "password" {
      var list = ids[identity.providerID]?.arrayValue ?? []
      list.append(.string(identity.rawID))
      ids[identity.providerID] = .array(list)
    }
    claims["iss"] = .string(issuerPrefix + project.projectID)
    claims["aud"] = .string(project.projectID)
    claims["auth_time"] = .int(authTime)
    claims["user_id"] = .string(account.localID)
    claims["sub"] = .string(account.localID)
    claims["iat"] = .int(issuedAt)
    claims["exp"] = .int(issuedAt + project.effectiveIDTokenTTLSeconds)
    claims["firebase"] = .object(["identities": .object(ids), "sign_in_provider": .string(signInProvider)])
    if signInProvider == "anonymous" { claims["provider_id"] = "anonymous" }
    if let email = account.email {
      claims["email"] = .string(email)
      claims["email_verified"] = .bool(account.emailVerified)
    }
    return claims
  }
}
