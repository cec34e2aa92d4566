import AnonAuthStore
import AnonAuthWire

/// Finding and spending email action codes.
struct EmailActionCodes {
  let env: ServiceEnvironment

  /// The stored code a request's `oob_code` is, not yet spent and not expired.
  /// - Throws: `INVALID_OOB_CODE` (unknown, spent, malformed), `EXPIRED_OOB_CODE`.
  func find(_ raw: String, project: ProjectRecord) async throws(RPCError) -> OobCodeRecord {
    guard OobCodeFactory.plausible(raw) else {
      throw RPCError(.invalidOobCode, "the code is not valid")
    }
    let hash = OobCodeFactory.hash(raw)
    let projectID = project.projectID
    let found = try await env.read { db in
      try OobCodesRepository.find(db, projectID: projectID, codeHash: hash)
    }
    guard let found else {
      env.logger.info("email action code refused: unknown or used", ["project_id": .string(projectID)])
      throw RPCError(.invalidOobCode, "the code is not valid, or was used already")
    }
    if found.expiresAtMs <= env.clock.nowMs() {
      env.logger.info(
        "email action code refused: expired",
        [
          "project_id": .string(projectID), "uid": .string(found.localID),
          "request_type": .string(found.kind),
        ])
      throw RPCError(.expiredOobCode, "the code has expired")
    }
    return found
  }

  /// Spends `code` in a write job and answers its account, which must still exist, be
  /// enabled and have the email the code was sent to.
  /// - Throws: `INVALID_OOB_CODE` when it was spent meanwhile or the account's email
  ///   changed; `EXPIRED_OOB_CODE`; `USER_NOT_FOUND`; `USER_DISABLED`.
  static func spend(_ db: Database, _ code: OobCodeRecord, nowMs: Int64) throws -> AccountRecord {
    if code.expiresAtMs <= nowMs { throw RPCError(.expiredOobCode, "the code has expired") }
    guard try OobCodesRepository.spend(db, codeHash: code.codeHash) else {
      throw RPCError(.invalidOobCode, "the code was used already")
    }
    guard let account = try AccountsRepository.get(db, projectID: code.projectID, localID: code.localID)
    else {
      throw RPCError(.userNotFound, "the account no longer exists")
    }
    guard account.email == code.email else {
      throw RPCError(.invalidOobCode, "the code was sent to an address the account no longer has")
    }
    if account.disabled { throw RPCError(.userDisabled, "the account is disabled") }
    return account
  }
}
