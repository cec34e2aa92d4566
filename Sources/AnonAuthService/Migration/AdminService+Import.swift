import AnonAuthCrypto
import AnonAuthStore
import AnonAuthWire

/// `AdminService/ImportAccounts`: accounts brought over from Firebase keep their uids,
/// their password hashes (verified as imported, replaced by AnonAuth's scrypt at the first
/// sign-in) and their provider identities. Each row is all or nothing; a refused row is
/// reported and the others go on; importing the same rows again changes nothing.
extension AdminService {
  public func importAccounts(_ request: ImportAccountsRequest, context: CallContext) async throws(RPCError)
    -> ImportAccountsResponse
  {
    let project = try existing(request.projectId, context)
    guard request.accounts.count <= CallLimits.maxImportAccounts else {
      throw RPCError(.invalidArgument, "at most \(CallLimits.maxImportAccounts) accounts a call")
    }
    guard request.onConflict == .skip || request.onConflict == .fail else {
      throw RPCError(.invalidArgument, "on_conflict must be IMPORT_CONFLICT_SKIP or IMPORT_CONFLICT_FAIL")
    }
    let sealedConfig = try sealedHashConfig(
      request.hashConfig ?? PasswordHashConfig(), projectID: project.projectID)
    let now = env.clock.nowMs()
    var response = ImportAccountsResponse()
    var rows: [(index: UInt64, row: ImportRow)] = []
    for (offset, imported) in request.accounts.enumerated() {
      let (index, overflow) = request.firstIndex.addingReportingOverflow(UInt64(offset))
      guard !overflow else { throw RPCError(.invalidArgument, "first_index is too large") }
      do throws(ImportRow.Refusal) {
        rows.append(
          (
            index,
            try ImportRow.check(
              imported, projectID: project.projectID, hashConfigID: sealedConfig?.id, nowMs: now)
          ))
      } catch {
        response.errors.append(
          ImportRowError(
            index: index, localId: String(imported.localId.prefix(128)), reason: error.reason,
            message: error.message))
      }
    }
    let projectID = project.projectID
    let failOnConflict = request.onConflict == .fail
    let dryRun = request.dryRun
    let checked = rows
    let outcome = try await env.write(Self.admitted) {
      db -> (imported: UInt32, skipped: UInt32, errors: [ImportRowError]) in
      try db.execute("SAVEPOINT anonauth_import")
      let result = try Self.importRows(
        db, checked, projectID: projectID, failOnConflict: failOnConflict, sealedConfig: sealedConfig,
        nowMs: now)
      if dryRun { try db.execute("ROLLBACK TO anonauth_import") }
      try db.execute("RELEASE anonauth_import")
      return result
    }
    response.imported = outcome.imported
    response.skipped = outcome.skipped
    response.errors = (response.errors + outcome.errors).sorted { $0.index < $1.index }
    env.logger.info(
      "accounts imported",
      [
        "project_id": .string(projectID), "imported": .int(Int64(outcome.imported)),
        "skipped": .int(Int64(outcome.skipped)), "refused": .int(Int64(response.errors.count)),
        "dry_run": .bool(dryRun),
      ])
    return response
  }

  /// The request's hash config, validated and sealed under the master key, with its id.
  private func sealedHashConfig(_ proto: PasswordHashConfig, projectID: String) throws(RPCError)
    -> (id: String, sealed: [UInt8])?
  {
    guard !proto.algorithm.isEmpty else { return nil }
    guard let algorithm = ImportHashConfig.Algorithm(rawValue: proto.algorithm.uppercased()) else {
      throw RPCError(
        .invalidArgument, "hash_config.algorithm must be SCRYPT, PBKDF2_SHA256, HMAC_SHA256 or BCRYPT")
    }
    let config: ImportHashConfig
    do {
      config = try ImportHashConfig(
        algorithm: algorithm, signerKey: proto.signerKey, saltSeparator: proto.saltSeparator,
        rounds: Int(proto.rounds), memCost: Int(proto.memCost), saltFirst: proto.saltFirst)
    } catch {
      throw RPCError(.invalidArgument, "hash_config: \(error.message)")
    }
    let id = config.configID
    do {
      let sealed = try AESGCM.seal(
        config.encoded(), key: env.masterKey, associatedData: Array("\(projectID)/\(id)".utf8))
      return (id, sealed)
    } catch {
      throw RPCError(.internalError, "sealing the hash config failed")
    }
  }

  /// Inside the writer's transaction: each row in a savepoint of its own, so a row that
  /// conflicts with the store (or an earlier row) leaves nothing behind.
  private static func importRows(
    _ db: Database, _ rows: [(index: UInt64, row: ImportRow)], projectID: String, failOnConflict: Bool,
    sealedConfig: (id: String, sealed: [UInt8])?, nowMs: Int64
  ) throws -> (imported: UInt32, skipped: UInt32, errors: [ImportRowError]) {
    let project = try ProjectsRepository.get(db, projectID)
    var imported: UInt32 = 0
    var skipped: UInt32 = 0
    var errors: [ImportRowError] = []
    var usesConfig = false
    // What earlier rows of this call took: a file that names a uid or an email twice is
    // told so, not answered as if the store had it before.
    var uidsInCall: Set<String> = []
    var emailsInCall: Set<String> = []
    for (index, row) in rows {
      func refuse(_ reason: ImportRowReason, _ message: String) {
        errors.append(
          ImportRowError(index: index, localId: row.account.localID, reason: reason.name, message: message))
      }
      if uidsInCall.contains(row.account.localID) {
        refuse(.duplicateUID, "an earlier row of this batch has this uid")
        continue
      }
      if let email = row.account.email, emailsInCall.contains(email) {
        refuse(.duplicateEmail, "an earlier row of this batch has this email")
        continue
      }
      if try AccountsRepository.get(db, projectID: projectID, localID: row.account.localID) != nil {
        if failOnConflict { refuse(.uidExists, "an account with this uid exists") } else { skipped += 1 }
        continue
      }
      if let email = row.account.email,
        try AccountsRepository.byEmail(db, projectID: projectID, email: email) != nil
      {
        refuse(.emailExists, "another account has this email")
        continue
      }
      if let taken = try row.identities.first(where: {
        try AccountsRepository.owner(db, projectID: projectID, providerID: $0.providerID, rawID: $0.rawID)
          != nil
      }) {
        refuse(.credentialAlreadyInUse, "\(taken.providerID) identity belongs to another account")
        continue
      }
      var account = row.account
      if account.isAnonymous, let project, project.autoCleanupEnabled {
        // The rule every anonymous account follows: 30 days from its creation, or from
        // when clean-up was turned on if that is later.
        account.scheduledDeletionAtMs =
          max(account.createdAtMs, project.autoCleanupEnabledAtMs) + CleanupRepository.lifetimeMs
      }
      try db.execute("SAVEPOINT anonauth_import_row")
      do {
        try AccountsRepository.insert(db, account)
        for identity in row.identities {
          try AccountsRepository.insertIdentity(db, projectID: projectID, localID: account.localID, identity)
        }
        try db.execute("RELEASE anonauth_import_row")
      } catch {
        try db.execute("ROLLBACK TO anonauth_import_row")
        try db.execute("RELEASE anonauth_import_row")
        refuse(.invalidField, "the row could not be stored")
        continue
      }
      imported += 1
      uidsInCall.insert(account.localID)
      if let email = account.email { emailsInCall.insert(email) }
      if account.passwordHash.map({ $0.hasPrefix(ImportedPasswordHash.prefix) }) == true { usesConfig = true }
    }
    if usesConfig, let sealedConfig {
      try PasswordHashConfigsRepository.insert(
        db, projectID: projectID, configID: sealedConfig.id, sealed: sealedConfig.sealed, nowMs: nowMs)
    }
    return (imported, skipped, errors)
  }
}
