import AnonAuthStore
import AnonAuthWire

extension AccountService {
  // MARK: UpdateAccount (addition)

  /// The fields `UpdateOwnAccountRequest.update_mask` may name.
  static let updatableFields: Set<String> = ["display_name", "email", "password"]

  /// Changes the account of `id_token` as its signed-in user: the display name; an email
  /// and a password (linked as `linkWithCredential` links one when the account has no
  /// password yet); or a new email or password of a password account. A new password
  /// revokes every other session, as Firebase does. The answer carries a new session.
  public func updateAccount(_ request: UpdateOwnAccountRequest, context: CallContext) async throws(RPCError)
    -> AuthResponse
  {
    let project = try env.project(context)
    let mask = Set(request.updateMask)
    guard mask.isSubset(of: Self.updatableFields) else {
      throw RPCError(.invalidArgument, "update_mask names a field that cannot be set")
    }
    let claims = try env.minter.verify(request.idToken, projectID: project.projectID)
    let caller = try await account(for: claims, project: project, log: context.log)
    let authTime = RecentSignIn.authTime(claims)
    let setsCredential = mask.contains("email") || mask.contains("password")
    return try await env.admitting(context, project: project) {
      admitted async throws(RPCError) -> AuthResponse in
      // The name first: a link or a new password moves valid_since past this ID token.
      if mask.contains("display_name") {
        try await setDisplayName(
          request.displayName, of: caller.account.localID, tokenIssuedAt: caller.issuedAt,
          project: project, admitted)
      }
      // An account signed in by email link has the password identity and no hash yet:
      // it sets a password as a password account changes one.
      let hasPasswordIdentity = caller.identities.contains { $0.providerID == ProviderSettings.password }
      if setsCredential, caller.account.passwordHash == nil, !hasPasswordIdentity {
        guard mask.contains("email"), mask.contains("password") else {
          throw RPCError(.invalidArgument, "an account without a password needs email and password together")
        }
        var credential = Credential()
        credential.providerId = ProviderSettings.password
        credential.email = request.email
        credential.password = request.password
        var link = LinkWithCredentialRequest()
        link.idToken = request.idToken
        link.credential = credential
        return try await linkWithCredential(link, context: context)
      }
      if setsCredential {
        return try await changeCredential(
          email: mask.contains("email") ? request.email : nil,
          password: mask.contains("password") ? request.password : nil, caller: caller, authTime: authTime,
          project: project, admitted)
      }
      // Only the name: a new ID token that shows it, on the caller's own session (no new
      // refresh token).
      let (account, identities) =
        try await env.read { db -> (AccountRecord, [IdentityRecord])? in
          let localID = caller.account.localID
          guard let account = try AccountsRepository.get(db, projectID: project.projectID, localID: localID)
          else {
            return nil
          }
          return (
            account, try AccountsRepository.identities(db, projectID: project.projectID, localID: localID)
          )
        } ?? (caller.account, caller.identities)
      return try await authResponse(
        project: project, account: account, identities: identities,
        signInProvider: claims["firebase"]?["sign_in_provider"]?.stringValue ?? "", authTime: authTime,
        refreshToken: "", isNewUser: false, admitted)
    }
  }

  /// Sets the display name (the sign-up rules: at most 256 bytes, no control characters).
  private func setDisplayName(
    _ name: String, of localID: String, tokenIssuedAt: Int64, project: ProjectRecord, _ admitted: Admitted
  )
    async throws(RPCError)
  {
    guard name.utf8.count <= 256 else {
      throw RPCError(.invalidArgument, "display_name is longer than 256 bytes")
    }
    guard !ProviderText.hasControl(name) else {
      throw RPCError(.invalidArgument, "display_name has control characters")
    }
    let projectID = project.projectID
    try await env.write(admitted) { db in
      var account = try AccountLinker.changeableAccount(
        db, projectID, localID, tokenIssuedAt: tokenIssuedAt)
      account.displayName = name
      try AccountsRepository.update(db, account)
    }
  }

  /// A new email and/or password on an account that has a password. The email stays
  /// unique in the project (`EMAIL_EXISTS`) and is no longer verified; a new password
  /// moves `valid_since` to now and revokes every refresh token of the account, so only
  /// the session this call starts survives.
  private func changeCredential(
    email rawEmail: String?, password: String?,
    caller: (account: AccountRecord, identities: [IdentityRecord], issuedAt: Int64), authTime: Int64,
    project: ProjectRecord, _ admitted: Admitted
  ) async throws(RPCError) -> AuthResponse {
    try ProviderSettings.requirePassword(project)
    let nowSeconds = env.clock.nowSeconds()
    try RecentSignIn.require(
      caller.account, authTime: authTime, nowSeconds: nowSeconds, for: "changing the email or password")
    let email = try rawEmail.map { raw throws(RPCError) in try EmailAddress.require(raw) }
    if let password { try PasswordPolicy.check(password, project: project) }
    try admitted.reserve(password == nil ? [.write, .signing] : [.password, .write, .signing])
    let hash: String? = if let password { try await env.hashPassword(password, admitted) } else { nil }
    let session = try NewSession(
      provider: ProviderSettings.password, nowMs: env.clock.nowMs(), authTime: authTime)
    let projectID = project.projectID
    let localID = caller.account.localID
    let clock = env.clock
    let changed = try await env.write(admitted) { db -> (AccountRecord, [IdentityRecord]) in
      var account = try AccountLinker.changeableAccount(
        db, projectID, localID, tokenIssuedAt: caller.issuedAt)
      try RecentSignIn.require(
        account, authTime: authTime, nowSeconds: clock.nowSeconds(), for: "changing the email or password")
      if let email, email != account.email {
        if let other = try AccountsRepository.byEmail(db, projectID: projectID, email: email),
          other.localID != localID
        {
          throw RPCError(.emailExists, "another account has this email")
        }
        account.email = email
        account.emailVerified = false
        // The password identity is the email.
        if try AccountsRepository.deleteIdentity(
          db, projectID: projectID, localID: localID, providerID: ProviderSettings.password)
        {
          try AccountsRepository.insertIdentity(
            db, projectID: projectID, localID: localID,
            IdentityRecord(providerID: ProviderSettings.password, rawID: email, email: email))
        }
      }
      if let hash {
        account.passwordHash = hash
        account.validSince = max(account.validSince, session.nowMs / 1000)
        try RefreshTokensRepository.revokeAccount(db, projectID: projectID, localID: localID)
        // A new password spends the password-reset codes already mailed.
        try OobCodesRepository.spendAccount(
          db, projectID: projectID, localID: localID, kinds: [OobKind.passwordReset.rawValue])
      }
      try AccountsRepository.update(db, account)
      try RefreshTokensRepository.insert(
        db, session.record(projectID: projectID, localID: localID, validSince: account.validSince))
      return (account, try AccountsRepository.identities(db, projectID: projectID, localID: localID))
    }
    return try await authResponse(
      project: project, account: changed.0, identities: changed.1, signInProvider: ProviderSettings.password,
      authTime: session.authTime, refreshToken: session.token, isNewUser: false,
      issuedAt: max(changed.0.validSince, nowSeconds), admitted)
  }
}
