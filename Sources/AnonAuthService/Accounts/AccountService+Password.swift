import AnonAuthCrypto
import AnonAuthStore
import AnonAuthWire

extension AccountService {
  // MARK: SignUp with email and password

  /// A new permanent account with an email and a password (the sign-up quota applies).
  func signUp(
    _ request: EmailPasswordSignUp, project: ProjectRecord, context: CallContext, _ admitted: Admitted
  ) async throws(RPCError) -> AuthResponse {
    let email = try EmailAddress.require(request.email)
    try PasswordPolicy.check(request.password, project: project)
    guard request.displayName.utf8.count <= 256 else {
      throw RPCError(.invalidArgument, "display_name is longer than 256 bytes")
    }
    // ImportAccounts refuses control characters, so an exported account must not have
    // them: refused here as provider names are (`ProviderText`).
    guard !ProviderText.hasControl(request.displayName) else {
      throw RPCError(.invalidArgument, "display_name has control characters")
    }
    let ipKey = try quotaIPKey(context)
    let projectID = project.projectID
    // Admission before any scrypt work and before the email is looked up: the attempt is
    // counted against the per-IP sign-up quota first (exactly, in a write job), so an
    // over-quota caller costs no hash and cannot probe which emails are taken faster than
    // the quota lets it sign up. A taken email keeps its counted place (returned, not
    // thrown, so the job's count is not rolled back).
    // Its two writes, its hash and its token are admitted per IP and project together,
    // before the first of them.
    try admitted.reserve([.write, .password, .write, .signing])
    let admittedAtMs = env.clock.nowMs()
    let taken: Bool
    do {
      taken = try await env.write(admitted) { db in
        try SignUpQuota.admit(db, project: project, ipKey: ipKey, nowMs: admittedAtMs)
        return try AccountsRepository.byEmail(db, projectID: projectID, email: email) != nil
      }
    } catch {
      if error.reason == Reason.tooManyAttempts.name { env.metrics.quotaRefusals.add(1, ordering: .relaxed) }
      throw error
    }
    if taken { throw RPCError(.emailExists, "another account has this email") }
    let hash = try await env.hashPassword(
      request.password, admitted, refundingQuotaOf: projectID, ipKey: ipKey, atMs: admittedAtMs)
    let session = try NewSession(provider: ProviderSettings.password, nowMs: env.clock.nowMs())
    let localID = try env.uidOrder.newLocalID(nowMs: session.nowMs)
    var account = AccountRecord(
      projectID: projectID, localID: localID, isAnonymous: false, createdAtMs: session.nowMs)
    account.email = email
    account.passwordHash = hash
    account.displayName = request.displayName
    let identity = IdentityRecord(
      providerID: ProviderSettings.password, rawID: email, email: email, displayName: request.displayName)
    let day = UTCDay.string(ms: session.nowMs)
    let created = account
    try await env.write(admitted) { db in
      // The email may have been taken while the password was hashed.
      if try AccountsRepository.byEmail(db, projectID: projectID, email: email) != nil {
        throw RPCError(.emailExists, "another account has this email")
      }
      try AccountsRepository.insert(db, created)
      try AccountsRepository.insertIdentity(db, projectID: projectID, localID: localID, identity)
      try RefreshTokensRepository.insertFirst(db, session.record(projectID: projectID, localID: localID))
      try UsageRepository.countSignUp(
        db, projectID: projectID, day: day, provider: ProviderSettings.password)
    }
    env.metrics.signedUp(provider: ProviderSettings.password)
    return try await authResponse(
      project: project, account: account, identities: [identity], signInProvider: ProviderSettings.password,
      authTime: session.authTime, refreshToken: session.token, isNewUser: true, admitted)
  }

  // MARK: SignInWithPassword

  /// Signs in with an email and a password. An unknown email, an account without a
  /// password and a wrong password all answer `INVALID_LOGIN_CREDENTIALS` after the same
  /// scrypt work; failures are throttled per account and per IP.
  public func signInWithPassword(_ request: SignInWithPasswordRequest, context: CallContext)
    async throws(RPCError) -> AuthResponse
  {
    let project = try env.project(context)
    return try await env.admitting(context, project: project) {
      admitted async throws(RPCError) -> AuthResponse in
      try await signInWithPassword(
        email: request.email, password: request.password, project: project, context: context, admitted)
    }
  }

  func signInWithPassword(
    email rawEmail: String, password: String, project: ProjectRecord, context: CallContext,
    _ admitted: Admitted
  ) async throws(RPCError) -> AuthResponse {
    try ProviderSettings.requirePassword(project)
    let email = try EmailAddress.require(rawEmail)
    let projectID = project.projectID
    let throttle = env.linking.throttle
    let accountKey = SignInThrottle.accountKey(projectID: projectID, email: email)
    let ipKey = throttleIPKey(context, projectID: projectID)
    let attemptAtMs = env.clock.nowMs()
    try reserveAttempt(
      throttle, account: accountKey, ip: ipKey, nowMs: attemptAtMs, refusals: env.metrics.passwordThrottled,
      message: "too many failed sign-ins; try again later")
    // The hash, the write and the token are admitted per IP and project (successes count
    // too) before any of them; refused, the attempt was not judged.
    do {
      try admitted.reserve([.password, .write, .signing])
    } catch {
      throttle.release(account: accountKey, ip: ipKey, reservedAtMs: attemptAtMs)
      throw error
    }
    let found = try await env.read { db in
      try AccountsRepository.byEmail(db, projectID: projectID, email: email)
    }
    // A password over the policy's limit cannot be stored, so it cannot match; its first
    // 4096 bytes are still checked against the dummy hash so that it costs the same.
    let tooLong = password.utf8.count > PasswordPolicy.maximumBytes
    let checked =
      tooLong ? String(decoding: password.utf8.prefix(PasswordPolicy.maximumBytes), as: UTF8.self) : password
    let stored = tooLong ? nil : found?.passwordHash
    let verification: PasswordHasher.Verification
    do {
      if let stored, let imported = ImportedPasswordHash(stored: stored) {
        verification = try await env.verifyImportedPassword(
          checked, against: imported, projectID: projectID, admitted)
      } else {
        verification = try await env.verifyPassword(checked, against: stored, admitted)
      }
    } catch {
      // Not judged (the password pool was full, or the call ended): not a failure.
      throttle.release(account: accountKey, ip: ipKey, reservedAtMs: attemptAtMs)
      throw error
    }
    guard verification.matches, let account = found, let verifiedHash = stored else {
      throw RPCError(.invalidLoginCredentials, "the email or the password is wrong")  // counted already
    }
    throttle.succeeded(account: accountKey, ip: ipKey, reservedAtMs: attemptAtMs)
    // Best effort: a right password signs in even when the pool cannot take the re-hash
    // now (it is tried again on a later sign-in).
    let rehash = verification.needsRehash ? (try? await env.hashPassword(password, admitted)) : nil
    let session = try NewSession(provider: ProviderSettings.password, nowMs: env.clock.nowMs())
    let localID = account.localID
    let (signedIn, identities) = try await env.write(admitted) { db -> (AccountRecord, [IdentityRecord]) in
      // The password may have changed, or the account gone, since it was checked.
      guard var current = try AccountsRepository.get(db, projectID: projectID, localID: localID),
        current.passwordHash == verifiedHash
      else { throw RPCError(.invalidLoginCredentials, "the email or the password is wrong") }
      if current.disabled { throw RPCError(.userDisabled, "the account is disabled") }
      current.lastSignInAtMs = session.nowMs
      try AccountsRepository.setLastSignIn(db, projectID: projectID, localID: localID, atMs: session.nowMs)
      if let rehash,
        try AccountsRepository.replacePasswordHash(
          db, projectID: projectID, localID: localID, expected: verifiedHash, with: rehash)
      {
        current.passwordHash = rehash
      }
      try RefreshTokensRepository.insert(
        db, session.record(projectID: projectID, localID: localID, validSince: current.validSince))
      return (current, try AccountsRepository.identities(db, projectID: projectID, localID: localID))
    }
    return try await authResponse(
      project: project, account: signedIn, identities: identities, signInProvider: ProviderSettings.password,
      authTime: session.authTime, refreshToken: session.token, isNewUser: false, admitted)
  }
}
