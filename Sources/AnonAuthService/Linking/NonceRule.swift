import AnonAuthCrypto
import AnonAuthStore
import AnonAuthWire

/// The nonce of a provider's ID token, which cannot be skipped: it is what stops a leaked
/// ID token from signing in for whoever holds it.
///
/// - A token with a `nonce` claim signs in only with the app's raw nonce: the claim must
///   be the raw nonce's SHA-256 in lower-case hex, as Firebase's SDKs have the app give
///   the provider (`appleCredential(withIDToken:rawNonce:fullName:)`,
///   `OAuthProvider.credential(providerID:idToken:rawNonce:)`). google.com alone also
///   takes the raw value itself, since Google's Sign-In documents putting the app's
///   nonce in the token as given. For every other provider the claim sent back as the
///   "raw" nonce is refused: anyone holding the token has the claim.
/// - No raw nonce for a token with a claim, a raw nonce for a token without one, or one
///   that does not match: `MISSING_OR_INVALID_NONCE`.
/// - Each nonce signs in once while its token lives (`UsedNonce`, recorded by the sign-in
///   or link's own write job); a token carrying a nonce may live a day at most, so the
///   record of used nonces holds at most a day of sign-ins.
struct NonceRule {
  let providerID: String

  /// The longest lifetime (from now) of a token with a nonce: its record lives as long.
  static let maximumLifetimeSeconds: Int64 = 86_400

  /// Whether the provider puts the app's raw nonce in the token as given.
  var echoesRawNonce: Bool { providerID == ProviderSettings.google }

  /// - Returns: the nonce to record as used, nil for a token without a nonce.
  func check(claim: JSONValue?, rawNonce: String, expiresAt exp: Int64, now: Int64) throws(RPCError)
    -> UsedNonce?
  {
    guard let claim else {
      if rawNonce.isEmpty { return nil }
      throw RPCError(.missingOrInvalidNonce, "the credential has a nonce but the ID token has none")
    }
    guard let claimed = claim.stringValue, !claimed.isEmpty else {
      throw RPCError(.invalidIdpResponse, "the ID token's nonce is not a string")
    }
    guard !rawNonce.isEmpty else {
      throw RPCError(.missingOrInvalidNonce, "the ID token has a nonce: the credential needs the raw nonce")
    }
    let hashed = Hex.encode(SHA256.hash(Array(rawNonce.utf8)))
    let matches =
      ConstantTime.equals(Array(claimed.utf8), Array(hashed.utf8))
      || (echoesRawNonce && ConstantTime.equals(Array(claimed.utf8), Array(rawNonce.utf8)))
    guard matches else {
      throw RPCError(.missingOrInvalidNonce, "the SHA-256 of the raw nonce is not the ID token's nonce")
    }
    guard exp - now <= Self.maximumLifetimeSeconds else {
      throw RPCError(.invalidIdpResponse, "an ID token with a nonce may live a day at most")
    }
    return UsedNonce(
      hash: SHA256.hash(Array((providerID + "\u{0}" + claimed).utf8)),
      expiresAtMs: (exp + ClockSkew.providerTokenSeconds) * 1000)
  }
}

/// A nonce that signed in: refused again until `expiresAtMs` (its token's expiry and the
/// clock skew allowed), by `UsedNoncesRepository.claim`.
struct UsedNonce: Sendable, Equatable {
  /// SHA-256 of the provider id, a zero byte and the token's nonce claim.
  let hash: [UInt8]
  let expiresAtMs: Int64

  /// Records the nonce in the write job `db`; a nonce already recorded fails the job with
  /// `MISSING_OR_INVALID_NONCE`, as Firebase answers a duplicate credential.
  func claim(_ db: Database, projectID: String, nowMs: Int64) throws {
    try UsedNoncesRepository.claim(
      db, projectID: projectID, nonceHash: hash, expiresAtMs: expiresAtMs, nowMs: nowMs
    ) { RPCError(.missingOrInvalidNonce, "Duplicate credential: this nonce already signed in") }
  }
}
