import AnonAuthCrypto
import AnonAuthStore
import AnonAuthWire

/// The refresh token of a new sign-in: a new token family whose `sign_in_provider` and
/// `auth_time` are those of this sign-in, made before the write job (the random
/// generator can fail; the job should not).
struct NewSession: Sendable {
  let token: String
  let hash: [UInt8]
  let nowMs: Int64
  let provider: String
  /// Seconds, the family's `auth_time`: this sign-in's time, or for the session a link
  /// starts the caller's own `auth_time` (a link proves the new credential, not that the
  /// account's owner signed in again; see `RecentSignIn`).
  let authTime: Int64

  /// - Parameter authTime: nil for a real sign-in (now); the caller's `auth_time` for a
  ///   link.
  init(provider: String, nowMs: Int64, authTime: Int64? = nil) throws(RPCError) {
    let made = try RefreshTokenFactory.make(nowMs: nowMs)
    token = made.token
    hash = made.hash
    self.nowMs = nowMs
    self.provider = provider
    self.authTime = min(authTime ?? nowMs / 1000, nowMs / 1000)
  }

  /// - Parameter validSince: the account's, as the write job read it. A revocation that
  ///   landed after this session's time was taken must not revoke the token this very job
  ///   hands out, so it is stamped no earlier than `valid_since`.
  func record(projectID: String, localID: String, validSince: Int64 = 0) -> RefreshTokenRecord {
    RefreshTokenRecord(
      tokenHash: hash, projectID: projectID, localID: localID,
      familyID: RefreshTokenFactory.familyID(forKey: hash),
      issuedAtMs: max(nowMs, validSince * 1000), authTime: authTime, signInProvider: provider)
  }
}
