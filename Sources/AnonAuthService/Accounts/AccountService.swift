import AnonAuthCrypto
import AnonAuthStore
import AnonAuthWire
import Foundation

/// `AccountService`: sign-up (anonymous or email/password), sign-in, linking, refresh,
/// the account's own data, deletion. Every call names its project with `x-api-key`
/// (checked before the payload is parsed). Password and provider methods live in
/// `AccountService+Password.swift` and `AccountService+Linking.swift`.
public struct AccountService: AccountServiceHandler {
  public static let name = AccountServiceMethods.serviceName
  /// How recent a sign-in a sensitive change needs (docs/protocol.md §5.1: 5 minutes).
  public static let recentSignInSeconds: Int64 = 300
  let env: ServiceEnvironment

  public init(environment: ServiceEnvironment) {
    env = environment
  }

  /// The router's credential check for this service.
  public func authenticate(_ context: CallContext) throws(RPCError) {
    _ = try env.project(context)
  }

  // MARK: SignUp

  public func signUp(_ request: SignUpRequest, context: CallContext) async throws(RPCError) -> AuthResponse {
    let project = try env.project(context)
    return try await env.admitting(context, project: project) {
      admitted async throws(RPCError) -> AuthResponse in
      try await signUp(request, project: project, context: context, admitted)
    }
  }

  /// `signUp` in the call's admission scope.
  private func signUp(
    _ request: SignUpRequest, project: ProjectRecord, context: CallContext, _ admitted: Admitted
  ) async throws(RPCError) -> AuthResponse {
    switch request.kind {
    case nil:
      throw RPCError(.missingSignUpMethod, "set anonymous or email_password")
    case .emailPassword(let emailPassword):
      try ProviderSettings.requirePassword(project)
      return try await signUp(emailPassword, project: project, context: context, admitted)
    case .anonymous:
      guard project.anonymousEnabled else {
        throw RPCError(.operationNotAllowed, "anonymous sign-in is disabled for this project")
      }
    }
    let ipKey = try quotaIPKey(context)
    let session = try NewSession(provider: "anonymous", nowMs: env.clock.nowMs())
    let now = session.nowMs
    let localID = try env.uidOrder.newLocalID(nowMs: now)
    var account = AccountRecord(
      projectID: project.projectID, localID: localID, isAnonymous: true, createdAtMs: now)
    let token = session.record(projectID: project.projectID, localID: localID)
    let day = UTCDay.string(ms: now)
    let unscheduled = account
    // Its write and its token are admitted together, before the write.
    try admitted.reserve([.write, .signing])
    do throws(RPCError) {
      // Nothing in the job waits for an answer (on the replicated store each wait is a
      // round trip to the leader): the quota and the clean-up switch are decided by the
      // statements themselves.
      let scheduled = try await env.write(admitted) { db in
        try SignUpQuota.admit(db, project: project, ipKey: ipKey, nowMs: now)
        try AccountsRepository.insert(
          db, unscheduled, deletionAtMsIfCleanupOn: now + CleanupRepository.lifetimeMs)
        try RefreshTokensRepository.insertFirst(db, token)
        try UsageRepository.countSignUp(db, projectID: project.projectID, day: day, provider: "anonymous")
        return try AccountsRepository.scheduledDeletion(db, projectID: project.projectID, localID: localID)
      }
      do {
        account.scheduledDeletionAtMs = try scheduled.first()?.int64(0) ?? 0
      } catch {
        throw env.storeFailure(error, "the new account's clean-up date could not be read")
      }
    } catch {
      if error.reason == Reason.tooManyAttempts.name { env.metrics.quotaRefusals.add(1, ordering: .relaxed) }
      throw error
    }
    env.metrics.signedUp(provider: "anonymous")
    context.log.setAccount(uid: localID, isAnonymous: true)
    return try await authResponse(
      project: project, account: account, identities: [], signInProvider: "anonymous",
      authTime: session.authTime, refreshToken: session.token, isNewUser: true, admitted)
  }

  // MARK: RefreshToken

  public func refreshToken(_ request: RefreshTokenRequest, context: CallContext) async throws(RPCError)
    -> AuthResponse
  {
    let project = try env.project(context)
    guard !request.refreshToken.isEmpty, request.refreshToken.utf8.count <= 512 else {
      throw RPCError(.invalidRefreshToken, "the refresh token is not valid")
    }
    let key = RefreshTokenFactory.hash(request.refreshToken)
    let clock = env.clock
    let fresh = try RefreshTokenFactory.make(familyID: RefreshRotation.familyID(ofKey: key))
    let grace = env.refreshReuseGraceMs
    let masterKey = env.masterKey
    let projectID = project.projectID

    // A token no session has (junk, revoked, of a deleted account), and a grace-window
    // replay with no re-issue left, are refused from a read: a flood of them never takes
    // the writer from anyone.
    let refusal = try await env.read { db in
      RefreshRotation.refusalFromRead(
        try RefreshTokensRepository.find(db, key: key), nowMs: clock.nowMs(), graceMs: grace)
    }
    if let refusal { throw refusal }

    // The rotation's write and the token it signs (a grace-window re-issue signs too)
    // are admitted per IP and project together, before the write: a refresh is never
    // refused its ID token after its refresh token was rotated (the client would lose
    // the session). Refused, the presented token is untouched and stays usable.
    return try await env.admitting(context, project: project) {
      admitted async throws(RPCError) -> AuthResponse in
      try admitted.reserve([.write, .signing])
      // One write job (RefreshRotation): lookup, reuse detection and rotation are atomic
      // with respect to every other refresh of the same family.
      let outcome = try await env.write(admitted) { db in
        try RefreshRotation.run(
          db, projectID: projectID, key: key, nowMs: clock.nowMs(), graceMs: grace, masterKey: masterKey,
          fresh: fresh)
      }
      switch outcome {
      case .refused(let error):
        throw error
      case .reused(let account, let generation):
        context.log.setAccount(uid: account.localID, isAnonymous: account.isAnonymous)
        env.logger.warning(
          "refresh token reuse: session revoked, valid_since moved",
          [
            "project_id": .string(projectID), "uid": .string(account.localID),
            "is_anon": .bool(account.isAnonymous), "generation": .int(generation),
          ])
        throw RPCError(.invalidRefreshToken, "the refresh token was already used")
      case .issued(let account, let identities, let session, let raw):
        context.log.setAccount(uid: account.localID, isAnonymous: account.isAnonymous)
        return try await authResponse(
          project: project, account: account, identities: identities, signInProvider: session.signInProvider,
          authTime: session.authTime, refreshToken: raw, isNewUser: false, admitted)
      }
    }
  }

  // MARK: GetAccountInfo, DeleteAccount

  public func getAccountInfo(_ request: GetAccountInfoRequest, context: CallContext) async throws(RPCError)
    -> AccountInfo
  {
    let project = try env.project(context)
    let (account, identities) = try await signedInAccount(request.idToken, project: project, log: context.log)
    return AccountInfo(account, identities: identities)
  }

  public func deleteAccount(_ request: DeleteAccountRequest, context: CallContext) async throws(RPCError)
    -> DeleteAccountResponse
  {
    let project = try env.project(context)
    let claims = try env.minter.verify(request.idToken, projectID: project.projectID)
    let account = try await self.account(for: claims, project: project, log: context.log).account
    // Deleting a permanent account is a sensitive change (Firebase's requires-recent-login).
    try RecentSignIn.require(
      account, authTime: RecentSignIn.authTime(claims), nowSeconds: env.clock.nowSeconds(),
      for: "deleting this account")
    let deleted = try await env.admitting(context, project: project) { admitted async throws(RPCError) in
      try await env.write(admitted) { db in
        try AccountsRepository.delete(db, projectID: project.projectID, localID: account.localID)
      }
    }
    guard deleted else { throw RPCError(.userNotFound, "the account no longer exists") }
    env.metrics.accountsDeleted(1)
    return DeleteAccountResponse()
  }

  // MARK: Shared

  /// The key the per-IP sign-up quota counts this call against.
  func quotaIPKey(_ context: CallContext) throws(RPCError) -> String {
    let ip = env.ipPolicy.endUserIP(context, callerIsAdmin: env.callerIsAdmin(context))
    guard let ipKey = ip.flatMap(IPKey.make) else {
      throw RPCError(.internalError, "the caller's address is unknown")
    }
    return ipKey
  }

  /// The account an ID token speaks for: valid, not revoked, existing, enabled.
  /// - Parameter log: where to report the uid for the call's log line, as soon as the
  ///   token's signature has been checked (so a refused call still names its account).
  func signedInAccount(_ idToken: String, project: ProjectRecord, log: CallLogFields? = nil)
    async throws(RPCError)
    -> (AccountRecord, [IdentityRecord])
  {
    let caller = try await signedInCaller(idToken, project: project, log: log)
    return (caller.account, caller.identities)
  }

  /// `signedInAccount`, with the token's `iat` for write jobs that check revocation again.
  func signedInCaller(_ idToken: String, project: ProjectRecord, log: CallLogFields? = nil)
    async throws(RPCError)
    -> (account: AccountRecord, identities: [IdentityRecord], issuedAt: Int64)
  {
    let claims = try env.minter.verify(idToken, projectID: project.projectID)
    return try await account(for: claims, project: project, log: log)
  }

  /// The account that already-verified claims speak for: existing, enabled, not revoked.
  /// Callers that need the claims too verify once and come here (RSA verification is the
  /// expensive part of a call).
  func account(for claims: [String: JSONValue], project: ProjectRecord, log: CallLogFields? = nil)
    async throws(RPCError)
    -> (account: AccountRecord, identities: [IdentityRecord], issuedAt: Int64)
  {
    guard let uid = claims["sub"]?.stringValue, let iat = claims["iat"]?.int64Value else {
      throw RPCError(.invalidIdToken, "the ID token lacks sub")
    }
    log?.setAccount(uid: uid)
    let projectID = project.projectID
    let found = try await env.read { db -> (AccountRecord, [IdentityRecord])? in
      guard let account = try AccountsRepository.get(db, projectID: projectID, localID: uid) else {
        return nil
      }
      return (account, try AccountsRepository.identities(db, projectID: projectID, localID: uid))
    }
    guard let (account, identities) = found else {
      throw RPCError(.userNotFound, "the account no longer exists")
    }
    log?.setAccount(uid: uid, isAnonymous: account.isAnonymous)
    if account.disabled { throw RPCError(.userDisabled, "the account is disabled") }
    if iat < account.validSince { throw RPCError(.tokenExpired, "the ID token was revoked") }
    return (account, identities, iat)
  }

  func authResponse(
    project: ProjectRecord, account: AccountRecord, identities: [IdentityRecord], signInProvider: String,
    authTime: Int64, refreshToken: String, isNewUser: Bool, issuedAt: Int64? = nil, _ admitted: Admitted
  ) async throws(RPCError) -> AuthResponse {
    let claims = IDTokenClaims.make(
      issuerPrefix: env.minter.currentIssuerPrefix, project: project, account: account,
      identities: identities,
      signInProvider: signInProvider, authTime: authTime, issuedAt: issuedAt ?? env.clock.nowSeconds())
    var response = AuthResponse()
    response.idToken = try await env.minter.sign(claims, admitted)
    response.localId = account.localID
    response.refreshToken = refreshToken
    response.expiresIn = project.effectiveIDTokenTTLSeconds
    response.isAnonymous = account.isAnonymous
    response.isNewUser = isNewUser
    response.signInProvider = signInProvider
    response.account = AccountInfo(account, identities: identities)
    return response
  }
}
