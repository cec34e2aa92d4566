import AnonAuthCrypto
import AnonAuthStore
import AnonAuthWire

/// The write job of `RefreshToken`: lookup, reuse detection, the grace window and the
/// rotation, atomic with respect to every other refresh of the same family (one writer).
/// A session is one row (migration 8), rewritten by each rotation.
enum RefreshRotation {
  /// Grace-window re-issues of one rotation's successor. A re-issue signs an ID token,
  /// so without a bound a holder of the previous token could mint tokens as fast as it
  /// can ask for ten seconds after every rotation. Legitimate repeats are few: a retry
  /// after a lost reply, or browser tabs that share a stored token and refresh together.
  /// Beyond the bound the call gets `TOO_MANY_ATTEMPTS_TRY_LATER` (`retry_after_seconds`
  /// 1) and the family is NOT revoked: the tab or client that wins the race has stored
  /// the successor, and the others succeed with it a second later; an attacker gains
  /// nothing it did not have after its first re-issue.
  static let maxGraceReissues: Int64 = 5

  static let reissuesSpent = RPCError(
    .tooManyAttempts, "this refresh token's successor was already handed out; use it",
    details: ["retry_after_seconds": "1"])

  /// The answer a read can give before the write job: a token no session has, or a
  /// replay whose grace-window re-issues are spent. Neither takes the writer, so a flood
  /// of them costs reads only. (A rotation between the read and the call's next step
  /// makes such a replay reuse; it is answered as spent, and its next replay revokes.)
  static func refusalFromRead(
    _ found: (session: RefreshSessionRecord, presented: RefreshSessionRecord.Presented)?, nowMs: Int64,
    graceMs: Int64
  ) -> RPCError? {
    guard let found else { return RPCError(.invalidRefreshToken, "the refresh token is not valid") }
    if found.presented == .previous, nowMs - found.session.rotatedAtMs <= graceMs,
      found.session.reissues >= maxGraceReissues
    {
      return reissuesSpent
    }
    return nil
  }

  enum Outcome: Sendable {
    case issued(AccountRecord, [IdentityRecord], RefreshSessionRecord, String)
    case refused(RPCError)
    /// Reuse: the family is revoked; the call gets `INVALID_REFRESH_TOKEN`, and the
    /// operator a log line (a token was probably stolen).
    case reused(AccountRecord, generation: Int64)
  }

  /// - Parameters:
  ///   - key: the presented token's key (`RefreshTokenFactory.hash`).
  ///   - fresh: the next token, made before the job (the random generator may fail;
  ///     the job should not) with the family id the key names (`familyID(ofKey:)`).
  ///   - now: read inside the job, so a job that waited in the writer's queue judges the
  ///     grace window by when it really runs.
  static func run(
    _ db: Database, projectID: String, key: [UInt8], nowMs now: Int64, graceMs: Int64, masterKey: [UInt8],
    fresh: (token: String, hash: [UInt8])
  ) throws -> Outcome {
    guard let (session, presented) = try RefreshTokensRepository.find(db, key: key),
      session.projectID == projectID, fresh.hash.starts(with: session.familyID)
    else { return .refused(RPCError(.invalidRefreshToken, "the refresh token is not valid")) }
    guard var account = try AccountsRepository.get(db, projectID: projectID, localID: session.localID) else {
      return .refused(RPCError(.invalidRefreshToken, "the account no longer exists"))
    }
    if account.disabled { return .refused(RPCError(.userDisabled, "the account is disabled")) }
    switch presented {
    case .current:
      if session.issuedAtMs / 1000 < account.validSince {
        return .refused(RPCError(.tokenExpired, "the refresh token was revoked"))
      }
      let sealed = try AESGCM.seal(Array(fresh.token.utf8), key: masterKey, associatedData: session.tokenHash)
      try RefreshTokensRepository.rotate(
        db, familyID: session.familyID, newHash: Array(fresh.hash.suffix(32)), atMs: now,
        successorSealed: sealed)
      account.lastRefreshAtMs = now
      try AccountsRepository.setLastRefresh(db, projectID: projectID, localID: account.localID, atMs: now)
      var rotated = session
      rotated.issuedAtMs = now
      return .issued(account, try identities(db, session), rotated, fresh.token)
    case .previous:
      // The previous token was issued before the live one: revoked by valid_since if
      // the live one is, and then answered as such.
      if session.issuedAtMs / 1000 < account.validSince {
        return .refused(RPCError(.tokenExpired, "the refresh token was revoked"))
      }
      if now - session.rotatedAtMs <= graceMs, let sealed = session.successorSealed,
        let successor = try? AESGCM.open(sealed, key: masterKey, associatedData: session.previousHash ?? [])
      {
        guard session.reissues < maxGraceReissues else { return .refused(reissuesSpent) }
        try RefreshTokensRepository.countReissue(db, familyID: session.familyID)
        return .issued(
          account, try identities(db, session), session, String(decoding: successor, as: UTF8.self))
      }
      try revoke(db, session, account: &account, nowMs: now)
      return .reused(account, generation: session.generation)
    case .older:
      try revoke(db, session, account: &account, nowMs: now)
      return .reused(account, generation: session.generation)
    }
  }

  /// The family a key names: its first 16 bytes, for a key of any form (a session
  /// carried over by migration 8 took its id from its key the same way).
  static func familyID(ofKey key: [UInt8]) -> [UInt8] {
    Array(key.prefix(RefreshTokensRepository.familyIDBytes))
  }

  private static func identities(_ db: Database, _ session: RefreshSessionRecord) throws -> [IdentityRecord] {
    try AccountsRepository.identities(db, projectID: session.projectID, localID: session.localID)
  }

  /// Reuse: the family's row goes, and the account's `valid_since` moves to now, so the
  /// ID tokens the family minted (a thief's among them) fail `check_revoked` as well
  /// (docs/protocol.md §8: revocation is by `valid_since`). The account's other sessions were
  /// issued before now too and end with it: a stolen token is a reason to sign in again
  /// everywhere. Tokens issued within this same second stay valid (whole seconds).
  private static func revoke(
    _ db: Database, _ session: RefreshSessionRecord, account: inout AccountRecord, nowMs: Int64
  ) throws {
    try RefreshTokensRepository.revokeFamily(db, familyID: session.familyID)
    account.validSince = max(account.validSince, nowMs / 1000)
    try AccountsRepository.update(db, account)
  }
}
