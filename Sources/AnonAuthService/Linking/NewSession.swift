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

  init(provider: String, nowMs: Int64) throws(RPCError) {
    let made = try RefreshTokenFactory.make(nowMs: nowMs)
    token = made.token
    hash = made.hash
    self.nowMs = nowMs
    self.provider = provider
  }

  /// Seconds of this sign-in, the family's `auth_time`.
  var authTime: Int64 { nowMs / 1000 }

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
