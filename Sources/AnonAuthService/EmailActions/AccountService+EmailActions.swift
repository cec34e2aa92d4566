import AnonAuthStore
import AnonAuthWire

extension AccountService {
  // MARK: SendOobCode (addition)

  /// Sends an email action's mail (Firebase's `accounts:sendOobCode`). PASSWORD_RESET and
  /// EMAIL_SIGNIN name the address; VERIFY_EMAIL and VERIFY_AND_CHANGE_EMAIL the signed-in
  /// account by `id_token`. Under the project's email enumeration protection (on by
  /// default) a reset for an address with no account answers as one that has.
  public func sendOobCode(_ request: SendOobCodeRequest, context: CallContext) async throws(RPCError)
    -> SendOobCodeResponse
  {
    let project = try env.project(context)
    let kind = try EmailActionSender.kind(request)
    try EmailActionSender.checkSettings(request, kind: kind, project: project)
    try ProviderSettings.requirePassword(project)
    var sendTarget: EmailActionSender.Target
    switch kind {
    case .passwordReset, .emailSignIn:
      let email = try EmailAddress.require(request.email)
      let projectID = project.projectID
      let account = try await env.read { db in
        try AccountsRepository.byEmail(db, projectID: projectID, email: email)
      }
      if account == nil, kind == .passwordReset, project.emailEnumerationProtectionDisabled {
        throw RPCError(.emailNotFound, "no account has this email")
      }
      var target = EmailActionSender.Target(account: account, email: email)
      if let account, account.disabled {
        // Told only without enumeration protection: with it, a disabled account's
        // address is answered as any other and sent nothing.
        if project.emailEnumerationProtectionDisabled {
          throw RPCError(.userDisabled, "the account is disabled")
        }
        target.silent = true
      }
      sendTarget = target
    case .verifyEmail:
      let (account, _) = try await signedInAccount(request.idToken, project: project, log: context.log)
      guard let email = account.email else {
        throw RPCError(.invalidArgument, "the account has no email to verify")
      }
      sendTarget = EmailActionSender.Target(account: account, email: email)
    case .verifyAndChangeEmail:
      let claims = try env.minter.verify(request.idToken, projectID: project.projectID)
      let caller = try await account(for: claims, project: project, log: context.log)
      try RecentSignIn.require(
        caller.account, authTime: RecentSignIn.authTime(claims), nowSeconds: env.clock.nowSeconds(),
        for: "changing the email")
      let newEmail = try EmailAddress.require(request.newEmail)
      let projectID = project.projectID
      let taken = try await env.read { db in
        try AccountsRepository.byEmail(db, projectID: projectID, email: newEmail)
      }
      if let taken, taken.localID != caller.account.localID {
        throw RPCError(.emailExists, "another account has this email")
      }
      sendTarget = EmailActionSender.Target(
        account: caller.account, email: caller.account.email ?? "", newEmail: newEmail)
    }
    let target = sendTarget
    return try await env.admitting(context, project: project) {
      admitted async throws(RPCError) -> SendOobCodeResponse in
      try await EmailActionSender(env: env).send(
        request, kind: kind, target: target, project: project, apiKey: context.metadata["x-api-key"] ?? "",
        returnLink: false, log: context.log, admitted)
    }
  }

  // MARK: ResetPassword (addition)

  /// Checks a code; with `new_password`, sets the password of the reset code's account:
  /// the code and every other reset code of the account are spent, every session ends
  /// and `valid_since` moves to now.
  public func resetPassword(_ request: ResetPasswordRequest, context: CallContext) async throws(RPCError)
    -> ResetPasswordResponse
  {
    let project = try env.project(context)
    let code = try await EmailActionCodes(env: env).find(request.oobCode, project: project)
    var response = ResetPasswordResponse()
    response.email = code.email
    response.requestType = code.kind
    response.newEmail = code.newEmail
    if request.newPassword.isEmpty { return response }
    guard code.kind == OobKind.passwordReset.rawValue else {
      throw RPCError(.invalidOobCode, "the code is not a password-reset code")
    }
    try PasswordPolicy.check(request.newPassword, project: project)
    let projectID = project.projectID
    let clock = env.clock
    let logger = env.logger
    return try await env.admitting(context, project: project) {
      admitted async throws(RPCError) -> ResetPasswordResponse in
      try admitted.reserve([.password, .write])
      let hash = try await env.hashPassword(request.newPassword, admitted)
      let localID = try await env.write(admitted) { db in
        let account = try EmailActionCodes.spend(db, code, nowMs: clock.nowMs())
        var changed = account
        changed.passwordHash = hash
        changed.validSince = max(account.validSince, clock.nowSeconds())
        try RefreshTokensRepository.revokeAccount(db, projectID: projectID, localID: account.localID)
        try OobCodesRepository.spendAccount(
          db, projectID: projectID, localID: account.localID, kinds: [OobKind.passwordReset.rawValue])
        try AccountsRepository.update(db, changed)
        let identities = try AccountsRepository.identities(
          db, projectID: projectID, localID: account.localID)
        if let email = account.email,
          !identities.contains(where: { $0.providerID == ProviderSettings.password })
        {
          try AccountsRepository.insertIdentity(
            db, projectID: projectID, localID: account.localID,
            IdentityRecord(providerID: ProviderSettings.password, rawID: email, email: email))
        }
        return account.localID
      }
      context.log.setAccount(uid: localID)
      logger.info(
        "password reset by email code: every session ended",
        ["project_id": .string(projectID), "uid": .string(localID)])
      return response
    }
  }

  // MARK: ApplyActionCode (addition)

  /// Applies a VERIFY_EMAIL code (the email is verified) or a VERIFY_AND_CHANGE_EMAIL
  /// code (the account's email becomes the new one, verified).
  public func applyActionCode(_ request: ApplyActionCodeRequest, context: CallContext) async throws(RPCError)
    -> AccountInfo
  {
    let project = try env.project(context)
    let code = try await EmailActionCodes(env: env).find(request.oobCode, project: project)
    guard code.kind == OobKind.verifyEmail.rawValue || code.kind == OobKind.verifyAndChangeEmail.rawValue
    else {
      throw RPCError(.invalidOobCode, "the code is not a verification code")
    }
    let projectID = project.projectID
    let clock = env.clock
    return try await env.admitting(context, project: project) {
      admitted async throws(RPCError) -> AccountInfo in
      let (account, identities) = try await env.write(admitted) { db in
        var account = try EmailActionCodes.spend(db, code, nowMs: clock.nowMs())
        if code.kind == OobKind.verifyAndChangeEmail.rawValue {
          if let other = try AccountsRepository.byEmail(db, projectID: projectID, email: code.newEmail),
            other.localID != account.localID
          {
            throw RPCError(.emailExists, "another account has this email")
          }
          account.email = code.newEmail
          if try AccountsRepository.deleteIdentity(
            db, projectID: projectID, localID: account.localID, providerID: ProviderSettings.password)
          {
            try AccountsRepository.insertIdentity(
              db, projectID: projectID, localID: account.localID,
              IdentityRecord(
                providerID: ProviderSettings.password, rawID: code.newEmail, email: code.newEmail))
          }
          // Codes sent to the old address no longer match the account.
        }
        account.emailVerified = true
        try AccountsRepository.update(db, account)
        return (
          account, try AccountsRepository.identities(db, projectID: projectID, localID: account.localID)
        )
      }
      context.log.setAccount(uid: account.localID, isAnonymous: account.isAnonymous)
      env.logger.info(
        "email action code applied",
        [
          "project_id": .string(projectID), "uid": .string(account.localID),
          "request_type": .string(code.kind),
        ])
      return AccountInfo(account, identities: identities)
    }
  }
}
