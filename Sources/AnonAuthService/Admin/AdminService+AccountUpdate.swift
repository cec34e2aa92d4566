import AnonAuthStore
import AnonAuthWire

/// AdminService: an account changed by an administrator, as Firebase's Admin SDK does
/// with `update_user`, `set_custom_user_claims` and `revoke_refresh_tokens` (all three
/// arrive at Firebase's `accounts:update`). Only the fields `update_mask` names change,
/// so a field at its proto3 default can be set as much as one left alone.
extension AdminService {
  /// The names `update_mask` may hold: UpdateAccountRequest's fields after `local_id`.
  enum AccountField: String, CaseIterable {
    case email, password
    case displayName = "display_name"
    case photoURL = "photo_url"
    case disabled
    case emailVerified = "email_verified"
    case customClaimsJSON = "custom_claims_json"
    case validSince = "valid_since"
    case deleteProviders = "delete_providers"
  }

  /// 9999-12-31T23:59:59Z: a bound well inside Int64 for `valid_since`.
  static let latestValidSince: Int64 = 253_402_300_799

  public func updateAccount(_ request: UpdateAccountRequest, context: CallContext) async throws(RPCError)
    -> AccountInfo
  {
    let project = try existing(request.projectId, context)
    var fields = Set<AccountField>()
    for name in request.updateMask {
      guard let field = AccountField(rawValue: name) else {
        throw RPCError(.invalidArgument, "update_mask names \"\(name.prefix(64))\", which is not a field")
      }
      fields.insert(field)
    }
    guard !fields.isEmpty else { throw RPCError(.invalidArgument, "update_mask is empty") }
    let email = fields.contains(.email) ? try EmailAddress.require(request.email) : nil
    if fields.contains(.password) { try PasswordPolicy.check(request.password, project: project) }
    if fields.contains(.displayName) { try AdminAccountFields.checkText(request.displayName, "display_name") }
    if fields.contains(.photoURL) { try AdminAccountFields.checkText(request.photoUrl, "photo_url") }
    if fields.contains(.customClaimsJSON) { try CustomClaimsPolicy.check(request.customClaimsJson) }
    if fields.contains(.validSince) {
      guard request.validSince >= 0, request.validSince <= Self.latestValidSince else {
        throw RPCError(.invalidArgument, "valid_since must be 0 to 253402300799 seconds")
      }
    }
    let removed = fields.contains(.deleteProviders) ? request.deleteProviders : []
    guard removed.allSatisfy({ !$0.isEmpty && $0.utf8.count <= 64 }) else {
      throw RPCError(.invalidArgument, "delete_providers holds an empty or over-long provider id")
    }
    // Hashed before the write job, which must not wait on scrypt.
    let hash = fields.contains(.password) ? try await env.hashPassword(request.password, Self.admitted) : nil
    let change = AccountChange(
      fields: fields, request: request, email: email, passwordHash: hash, nowSeconds: env.clock.nowSeconds())
    let projectID = project.projectID
    let localID = request.localId
    let updated = try await env.write(Self.admitted) { db -> (AccountRecord, [IdentityRecord])? in
      guard let account = try AccountsRepository.get(db, projectID: projectID, localID: localID) else {
        return nil
      }
      return try change.apply(db, to: account)
    }
    guard let (account, identities) = updated else { throw RPCError(.userNotFound, "no such account") }
    context.log.setAccount(uid: localID, isAnonymous: account.isAnonymous)
    env.logger.info(
      "account updated by admin",
      [
        "project_id": .string(projectID), "uid": .string(localID),
        "fields": .string(fields.map(\.rawValue).sorted().joined(separator: ",")),
      ])
    return AccountInfo(account, identities: identities)
  }
}

/// One checked `UpdateAccount`, applied inside its write job.
struct AccountChange: Sendable {
  let fields: Set<AdminService.AccountField>
  let request: UpdateAccountRequest
  /// Normalized, when `email` is in the mask.
  let email: String?
  /// The new password's hash, when `password` is in the mask.
  let passwordHash: String?
  let nowSeconds: Int64

  /// Providers go first, then the email and the password, so one request can replace a
  /// password identity. Throws `EMAIL_EXISTS` for another account's email, and
  /// `INVALID_ARGUMENT` for a password on an account left without an email.
  func apply(_ db: Database, to original: AccountRecord) throws -> (AccountRecord, [IdentityRecord]) {
    var account = original
    let projectID = account.projectID
    let localID = account.localID
    for providerID in request.deleteProviders where fields.contains(.deleteProviders) {
      // As unlinking does: the email goes with the password.
      try AccountLinker.removeProvider(providerID, from: &account, db)
    }
    var credentialChanged = false
    if let email, email != account.email {
      credentialChanged = true
      if try AccountsRepository.byEmail(db, projectID: projectID, email: email) != nil {
        throw RPCError(.emailExists, "another account has this email")
      }
      account.email = email
      if fields.contains(.emailVerified) == false { account.emailVerified = false }
    }
    if let passwordHash {
      guard account.email != nil else { throw RPCError(.invalidArgument, "a password needs an email") }
      account.passwordHash = passwordHash
      credentialChanged = true
      // A new password ends every session, as Firebase does.
      account.validSince = max(account.validSince, nowSeconds)
      try RefreshTokensRepository.revokeAccount(db, projectID: projectID, localID: localID)
      // A new password spends the password-reset codes already mailed.
      try OobCodesRepository.spendAccount(
        db, projectID: projectID, localID: localID, kinds: [OobKind.passwordReset.rawValue])
    }
    if credentialChanged, account.passwordHash != nil, let address = account.email {
      // The password identity follows the email it signs in with.
      _ = try AccountsRepository.deleteIdentity(
        db, projectID: projectID, localID: localID, providerID: ProviderSettings.password)
      try AccountsRepository.insertIdentity(
        db, projectID: projectID, localID: localID,
        IdentityRecord(
          providerID: ProviderSettings.password, rawID: address, email: address,
          displayName: fields.contains(.displayName) ? request.displayName : account.displayName))
    }
    if account.isAnonymous && (account.email != nil || account.passwordHash != nil) {
      // A credential makes the account permanent, and permanent accounts are never cleaned up.
      account.isAnonymous = false
      account.scheduledDeletionAtMs = 0
    }
    if fields.contains(.displayName) { account.displayName = request.displayName }
    if fields.contains(.photoURL) { account.photoURL = request.photoUrl }
    if fields.contains(.disabled) { account.disabled = request.disabled }
    if fields.contains(.emailVerified) { account.emailVerified = request.emailVerified }
    if fields.contains(.customClaimsJSON) { account.customClaimsJSON = request.customClaimsJson }
    if fields.contains(.validSince) {
      if request.validSince > account.validSince {
        // Firebase's revoke_refresh_tokens is this field set to now.
        try RefreshTokensRepository.revokeAccount(db, projectID: projectID, localID: localID)
      }
      account.validSince = request.validSince
    }
    try AccountsRepository.update(db, account)
    return (account, try AccountsRepository.identities(db, projectID: projectID, localID: localID))
  }
}
