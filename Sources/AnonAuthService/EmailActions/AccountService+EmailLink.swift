import AnonAuthStore
import AnonAuthWire

extension AccountService {
  // MARK: SignInWithEmailLink (addition)

  /// Signs in with a sign-in link's code and the email it was sent to: to the account of
  /// that email (its email is verified now), or to a new permanent account. With
  /// `id_token`, the email is linked to that account instead (an anonymous one becomes
  /// permanent and keeps its uid).
  public func signInWithEmailLink(_ request: SignInWithEmailLinkRequest, context: CallContext)
    async throws(RPCError) -> AuthResponse
  {
    let project = try env.project(context)
    try ProviderSettings.requirePassword(project)
    let email = try EmailAddress.require(request.email)
    let code = try await EmailActionCodes(env: env).find(request.oobCode, project: project)
    guard code.kind == OobKind.emailSignIn.rawValue else {
      throw RPCError(.invalidOobCode, "the code is not a sign-in link's code")
    }
    guard code.email == email else {
      throw RPCError(.invalidEmail, "the email is not the one the sign-in link was sent to")
    }
    let caller: (account: AccountRecord, identities: [IdentityRecord], issuedAt: Int64)? =
      request.idToken.isEmpty
      ? nil : try await signedInCaller(request.idToken, project: project, log: context.log)
    let ipKey = try quotaIPKey(context)
    let projectID = project.projectID
    let clock = env.clock
    return try await env.admitting(context, project: project) {
      admitted async throws(RPCError) -> AuthResponse in
      try admitted.reserve([.write, .signing])
      let session = try NewSession(provider: ProviderSettings.password, nowMs: clock.nowMs())
      let day = UTCDay.string(ms: session.nowMs)
      let newLocalID = try env.uidOrder.newLocalID(nowMs: session.nowMs)
      let outcome = try await env.write(admitted) { db in
        if code.expiresAtMs <= session.nowMs { throw RPCError(.expiredOobCode, "the code has expired") }
        guard try OobCodesRepository.spend(db, codeHash: code.codeHash) else {
          throw RPCError(.invalidOobCode, "the code was used already")
        }
        let owner = try AccountsRepository.byEmail(db, projectID: projectID, email: email)
        var account: AccountRecord
        var isNew = false
        if let caller {
          account = try AccountLinker.changeableAccount(
            db, projectID, caller.account.localID, tokenIssuedAt: caller.issuedAt)
          if let owner, owner.localID != account.localID {
            throw RPCError(.emailExists, "another account has this email")
          }
          if let current = account.email, current != email {
            throw RPCError(.invalidArgument, "the account has another email")
          }
          account.email = email
          account.isAnonymous = false
          account.scheduledDeletionAtMs = 0
        } else if let owner {
          account = owner
          if account.disabled { throw RPCError(.userDisabled, "the account is disabled") }
        } else {
          try SignUpQuota.admit(db, project: project, ipKey: ipKey, nowMs: session.nowMs)
          account = AccountRecord(
            projectID: projectID, localID: newLocalID, isAnonymous: false, createdAtMs: session.nowMs)
          account.email = email
          isNew = true
        }
        account.emailVerified = true
        account.lastSignInAtMs = session.nowMs
        if isNew {
          try AccountsRepository.insert(db, account)
          try UsageRepository.countSignUp(
            db, projectID: projectID, day: day, provider: ProviderSettings.password)
        } else {
          try AccountsRepository.update(db, account)
        }
        let identities = try AccountsRepository.identities(
          db, projectID: projectID, localID: account.localID)
        if !identities.contains(where: { $0.providerID == ProviderSettings.password }) {
          try AccountsRepository.insertIdentity(
            db, projectID: projectID, localID: account.localID,
            IdentityRecord(providerID: ProviderSettings.password, rawID: email, email: email))
        }
        if isNew {
          try RefreshTokensRepository.insertFirst(
            db, session.record(projectID: projectID, localID: account.localID))
        } else {
          _ = try RefreshTokensRepository.insert(
            db,
            session.record(projectID: projectID, localID: account.localID, validSince: account.validSince))
        }
        return (
          account, try AccountsRepository.identities(db, projectID: projectID, localID: account.localID),
          isNew
        )
      }
      let (account, identities, isNew) = outcome
      context.log.setAccount(uid: account.localID, isAnonymous: false)
      if isNew { env.metrics.signedUp(provider: ProviderSettings.password) }
      env.logger.info(
        caller == nil ? "signed in with an email link" : "email link linked",
        [
          "project_id": .string(projectID), "uid": .string(account.localID), "new_account": .bool(isNew),
          "was_anonymous": .bool(caller?.account.isAnonymous ?? false),
        ])
      return try await authResponse(
        project: project, account: account, identities: identities, signInProvider: ProviderSettings.password,
        authTime: session.authTime, refreshToken: session.token, isNewUser: isNew, admitted)
    }
  }
}
