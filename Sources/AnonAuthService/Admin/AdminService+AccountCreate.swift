import AnonAuthStore
import AnonAuthWire

/// AdminService: an account made by an administrator, as Firebase's Admin SDK does with
/// `create_user`. It is not a sign-up: no sign-up quota, no per-IP throttle, and the
/// project's sign-in methods need not be on (the administrator decides who exists).
extension AdminService {
  public func createAccount(_ request: CreateAccountRequest, context: CallContext) async throws(RPCError)
    -> AccountInfo
  {
    let project = try existing(request.projectId, context)
    let localID =
      request.localId.isEmpty ? try env.uidOrder.newLocalID(nowMs: env.clock.nowMs()) : request.localId
    try AdminAccountFields.checkUID(localID)
    let email = request.email.isEmpty ? nil : try EmailAddress.require(request.email)
    if !request.password.isEmpty {
      guard email != nil else { throw RPCError(.invalidArgument, "a password needs an email") }
      try PasswordPolicy.check(request.password, project: project)
    }
    try AdminAccountFields.checkText(request.displayName, "display_name")
    try AdminAccountFields.checkText(request.photoUrl, "photo_url")
    let hash = request.password.isEmpty ? nil : try await env.hashPassword(request.password, Self.admitted)
    let nowMs = env.clock.nowMs()
    var account = AccountRecord(
      projectID: project.projectID, localID: localID, isAnonymous: email == nil && hash == nil,
      createdAtMs: nowMs)
    account.email = email
    account.emailVerified = request.emailVerified
    account.displayName = request.displayName
    account.photoURL = request.photoUrl
    account.disabled = request.disabled
    account.passwordHash = hash
    if account.isAnonymous && project.autoCleanupEnabled {
      // The rule every anonymous account follows (docs/protocol.md §5.5).
      account.scheduledDeletionAtMs =
        max(nowMs, project.autoCleanupEnabledAtMs) + CleanupRepository.lifetimeMs
    }
    let identity = email.flatMap { address in
      hash == nil
        ? nil
        : IdentityRecord(
          providerID: ProviderSettings.password, rawID: address, email: address,
          displayName: request.displayName)
    }
    let created = account
    let projectID = project.projectID
    try await env.write(Self.admitted) { db in
      if try AccountsRepository.get(db, projectID: projectID, localID: localID) != nil {
        throw RPCError(.uidExists, "an account with this uid exists")
      }
      if let email, try AccountsRepository.byEmail(db, projectID: projectID, email: email) != nil {
        throw RPCError(.emailExists, "another account has this email")
      }
      try AccountsRepository.insert(db, created)
      if let identity {
        try AccountsRepository.insertIdentity(db, projectID: projectID, localID: localID, identity)
      }
    }
    context.log.setAccount(uid: localID, isAnonymous: created.isAnonymous)
    env.logger.info(
      "account created by admin",
      ["project_id": .string(projectID), "uid": .string(localID), "is_anon": .bool(created.isAnonymous)])
    return AccountInfo(created, identities: identity.map { [$0] } ?? [])
  }
}
