import AnonAuthStore
import AnonAuthWire

extension AccountService {
  // MARK: SignInWithIdp

  /// Signs in with a provider credential: to the account that holds the identity
  /// (`is_new_user` false), or to a new permanent account (`is_new_user` true, counted
  /// against the sign-up quota). A `password` credential signs in as
  /// `SignInWithPassword` does.
  public func signInWithIdp(_ request: SignInWithIdpRequest, context: CallContext) async throws(RPCError)
    -> AuthResponse
  {
    let project = try env.project(context)
    let credential = try Self.credential(request.credential)
    return try await env.admitting(context, project: project) {
      admitted async throws(RPCError) -> AuthResponse in
      try await signInWithIdp(credential, project: project, context: context, admitted)
    }
  }

  /// `signInWithIdp` in the call's admission scope.
  private func signInWithIdp(
    _ credential: Credential, project: ProjectRecord, context: CallContext, _ admitted: Admitted
  ) async throws(RPCError) -> AuthResponse {
    if credential.providerId == ProviderSettings.password {
      return try await signInWithPassword(
        email: credential.email, password: credential.password, project: project, context: context, admitted)
    }
    // Its write and its token are admitted together, before the provider's token is
    // verified: a refused call costs no verification and counts no failed attempt.
    try admitted.reserve([.write, .signing])
    let linker = AccountLinker(env: env)
    let identity = try await throttledIdentity(credential, project: project, context: context, admitted)
    let ipKey = try quotaIPKey(context)
    let session = try NewSession(provider: identity.providerID, nowMs: env.clock.nowMs())
    let signedIn: AccountLinker.SignedIn
    do {
      signedIn = try await linker.signIn(identity, project: project, ipKey: ipKey, session: session, admitted)
    } catch {
      if error.reason == Reason.tooManyAttempts.name { env.metrics.quotaRefusals.add(1, ordering: .relaxed) }
      throw error
    }
    if !signedIn.displaced.isEmpty {
      env.logger.info(
        "unverified account taken over by a verified provider identity",
        [
          "project_id": .string(project.projectID), "uid": .string(signedIn.account.localID),
          "provider": .string(identity.providerID),
          "removed_providers": .string(signedIn.displaced.sorted().joined(separator: ",")),
          "request_id": .string(context.requestID),
        ])
    }
    return try await authResponse(
      project: project, account: signedIn.account, identities: signedIn.identities,
      signInProvider: identity.providerID, authTime: session.authTime, refreshToken: session.token,
      isNewUser: signedIn.isNewUser, admitted)
  }

  // MARK: LinkWithCredential

  /// Links a credential to the account of `id_token`. The uid stays; an anonymous account
  /// becomes permanent and loses its clean-up schedule; `valid_since` moves to now, so
  /// ID tokens issued before are revoked while the ones returned here (issued at
  /// `valid_since`) stay valid; they carry the linked provider as `sign_in_provider` and
  /// the caller's own `auth_time` (a link is not a sign-in). On a permanent account the
  /// caller must have signed in within the last 5 minutes (`RecentSignIn`); anonymous
  /// accounts link at any age. A password link counts against the per-IP sign-up quota.
  public func linkWithCredential(_ request: LinkWithCredentialRequest, context: CallContext)
    async throws(RPCError) -> AuthResponse
  {
    let project = try env.project(context)
    let credential = try Self.credential(request.credential)
    let claims = try env.minter.verify(request.idToken, projectID: project.projectID)
    let caller = try await account(for: claims, project: project)
    let authTime = RecentSignIn.authTime(claims)
    let providerID = credential.providerId
    // Cheap checks first, so a refused link costs no provider call and no scrypt work;
    // the write jobs check the same things again.
    if providerID == ProviderSettings.password {
      try ProviderSettings.requirePassword(project)
    } else {
      _ = try ProviderSettings.config(providerID, project: project, masterKey: env.masterKey)
    }
    try RecentSignIn.require(
      caller.account, authTime: authTime, nowSeconds: env.clock.nowSeconds(), for: "linking a credential")
    if caller.identities.contains(where: { $0.providerID == providerID })
      || (providerID == ProviderSettings.password && caller.account.passwordHash != nil)
    {
      throw RPCError(.providerAlreadyLinked, "the account already has a \(providerID) credential")
    }
    return try await env.admitting(context, project: project) {
      admitted async throws(RPCError) -> AuthResponse in
      try await link(
        credential, caller: caller, authTime: authTime, project: project, context: context, admitted)
    }
  }

  /// `linkWithCredential` in the call's admission scope, after its cheap checks.
  private func link(
    _ credential: Credential, caller: (account: AccountRecord, identities: [IdentityRecord], issuedAt: Int64),
    authTime: Int64, project: ProjectRecord, context: CallContext, _ admitted: Admitted
  ) async throws(RPCError) -> AuthResponse {
    let providerID = credential.providerId
    let linker = AccountLinker(env: env)
    let ipKey = try quotaIPKey(context)
    let linked: AccountLinker.Linked
    let session: NewSession
    if providerID == ProviderSettings.password {
      (linked, session) = try await linker.linkPassword(
        credential, to: caller.account.localID, tokenIssuedAt: caller.issuedAt, authTime: authTime,
        ipKey: ipKey, project: project, admitted)
    } else {
      // Its write and its token are admitted together, before the provider's token is
      // verified (a password link reserves its own, in `linkPassword`).
      try admitted.reserve([.write, .signing])
      let identity = try await throttledIdentity(credential, project: project, context: context, admitted)
      session = try NewSession(provider: providerID, nowMs: env.clock.nowMs(), authTime: authTime)
      linked = try await linker.link(
        .identity(identity), to: caller.account.localID, tokenIssuedAt: caller.issuedAt, authTime: authTime,
        ipKey: ipKey, project: project, session: session, admitted)
    }
    env.metrics.linked(provider: providerID)
    env.logger.info(
      "credential linked",
      [
        "project_id": .string(project.projectID), "uid": .string(linked.account.localID),
        "provider": .string(providerID), "was_anonymous": .bool(caller.account.isAnonymous),
        "request_id": .string(context.requestID),
      ])
    return try await authResponse(
      project: project, account: linked.account, identities: linked.identities, signInProvider: providerID,
      authTime: session.authTime, refreshToken: session.token, isNewUser: false,
      issuedAt: linked.account.validSince, admitted)
  }

  // MARK: UnlinkProvider

  /// Removes a provider from the account of `id_token`; `password` takes the email and
  /// the password hash with it. The account never becomes anonymous again. Needs a
  /// sign-in within the last 5 minutes (`RecentSignIn`), and refuses to remove the only
  /// sign-in method left (`LAST_SIGN_IN_METHOD`).
  public func unlinkProvider(_ request: UnlinkProviderRequest, context: CallContext) async throws(RPCError)
    -> AccountInfo
  {
    let project = try env.project(context)
    let claims = try env.minter.verify(request.idToken, projectID: project.projectID)
    let caller = try await account(for: claims, project: project)
    let authTime = RecentSignIn.authTime(claims)
    try RecentSignIn.require(
      caller.account, authTime: authTime, nowSeconds: env.clock.nowSeconds(), for: "unlinking a provider")
    let linked = try await env.admitting(context, project: project) {
      admitted async throws(RPCError) -> AccountLinker.Linked in
      try await AccountLinker(env: env).unlink(
        request.providerId, from: caller.account.localID, tokenIssuedAt: caller.issuedAt, authTime: authTime,
        project: project, admitted)
    }
    return AccountInfo(linked.account, identities: linked.identities)
  }

  /// Verifies a provider credential, throttled per end-user IP: each attempt counts as a
  /// failure until it verifies, and past `LinkingContext.defaultIdpLimit` (30 failures in
  /// 10 minutes) the IP gets `TOO_MANY_ATTEMPTS_TRY_LATER` with `retry_after_seconds`
  /// before any provider call.
  func throttledIdentity(
    _ credential: Credential, project: ProjectRecord, context: CallContext, _ admitted: Admitted
  ) async throws(RPCError) -> VerifiedIdentity {
    try await throttledVerification(project: project, context: context) { () async throws(RPCError) in
      try await AccountLinker(env: env).identity(for: credential, project: project, admitted)
    }
  }

  /// Runs `verify` (a provider token's verification) under the per-IP identity-provider
  /// throttle, as `throttledIdentity` describes.
  func throttledVerification<T: Sendable>(
    project: ProjectRecord, context: CallContext, _ verify: () async throws(RPCError) -> T
  ) async throws(RPCError) -> T {
    let throttle = env.linking.idpThrottle
    let projectID = project.projectID
    let ipKey = throttleIPKey(context, projectID: projectID)
    let attemptAtMs = env.clock.nowMs()
    try reserveAttempt(
      throttle, account: nil, ip: ipKey, nowMs: attemptAtMs, refusals: env.metrics.idpThrottled,
      message: "too many failed identity-provider sign-ins; try again later")
    let identity: T
    do {
      identity = try await verify()
    } catch {
      // Only a judged token is a failure. Not judged: the provider's concurrency bound
      // refused the call, the call ended (deadline, closed connection), or the method or
      // provider is off for the project.
      let unjudged = [Reason.tooManyAttempts, .operationNotAllowed, .deadlineExceeded].map(\.name)
      if unjudged.contains(error.reason) || Task.isCancelled {
        throttle.release(account: nil, ip: ipKey, reservedAtMs: attemptAtMs)
      }
      throw error
    }
    throttle.succeeded(account: nil, ip: ipKey, reservedAtMs: attemptAtMs)
    return identity
  }

  /// The request's credential.
  /// - Throws: `INVALID_ARGUMENT` when it is missing, or when its `display_name` (Apple's
  ///   name for the user, from the app) breaks the sign-up rules: over 256 bytes, or
  ///   control characters.
  static func credential(_ credential: Credential?) throws(RPCError) -> Credential {
    guard let credential else { throw RPCError(.invalidArgument, "credential is missing") }
    guard credential.displayName.utf8.count <= 256 else {
      throw RPCError(.invalidArgument, "credential.display_name is longer than 256 bytes")
    }
    guard !ProviderText.hasControl(credential.displayName) else {
      throw RPCError(.invalidArgument, "credential.display_name has control characters")
    }
    return credential
  }
}
