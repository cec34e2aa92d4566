import AnonAuthStore
import AnonAuthWire

extension AccountService {
  // MARK: SignInWithFirebaseIdToken

  /// Exchanges a Firebase ID token of the project's `firebase_project_id` for an AnonAuth
  /// session on the account with the same uid: how a device signed in to Firebase moves
  /// to AnonAuth without its user noticing.
  ///
  /// - The exchange is off while `firebase_project_id` is empty: `OPERATION_NOT_ALLOWED`
  ///   (before the token is looked at).
  /// - The token is verified as the Firebase Admin SDKs do (`FirebaseTokenVerifier`),
  ///   under the per-IP identity-provider throttle; a bad token is `INVALID_IDP_RESPONSE`.
  /// - An unknown uid is `USER_NOT_FOUND` unless `firebase_create_unknown_users`
  ///   (`FirebaseExchange`); a disabled account is `USER_DISABLED`.
  /// - `is_new_user` is true only when this call made the account; `auth_time` is the
  ///   Firebase token's (the exchange is not a new authentication); `sign_in_provider`
  ///   follows `FirebaseExchange.signInProvider`.
  public func signInWithFirebaseIdToken(_ request: SignInWithFirebaseIdTokenRequest, context: CallContext)
    async throws(RPCError) -> AuthResponse
  {
    let project = try env.project(context)
    guard !project.firebaseProjectID.isEmpty else {
      throw RPCError(.operationNotAllowed, "the Firebase session exchange is off for this project")
    }
    return try await env.admitting(context, project: project) {
      admitted async throws(RPCError) -> AuthResponse in
      try await exchange(request, project: project, context: context, admitted)
    }
  }

  /// `signInWithFirebaseIdToken` in the call's admission scope.
  private func exchange(
    _ request: SignInWithFirebaseIdTokenRequest, project: ProjectRecord, context: CallContext,
    _ admitted: Admitted
  )
    async throws(RPCError) -> AuthResponse
  {
    // Its write and its token are admitted together, before the Firebase token is
    // verified: a refused call costs no verification and counts no failed attempt.
    try admitted.reserve([.write, .signing])
    let identity = try await throttledVerification(project: project, context: context) {
      () async throws(RPCError) in
      try await FirebaseTokenVerifier(project: project, cache: env.linking.jwks(admitted))
        .verify(idToken: request.idToken, nowSeconds: env.clock.nowSeconds())
    }
    context.log.setAccount(uid: identity.uid)
    let ipKey = try quotaIPKey(context)
    let session = try NewSession(provider: identity.signInProvider, nowMs: env.clock.nowMs())
    let signedIn: FirebaseExchange.SignedIn
    do {
      signedIn = try await FirebaseExchange(env: env).signIn(
        identity, project: project, ipKey: ipKey, session: session, admitted)
    } catch {
      if error.reason == Reason.tooManyAttempts.name { env.metrics.quotaRefusals.add(1, ordering: .relaxed) }
      throw error
    }
    context.log.setAccount(uid: signedIn.account.localID, isAnonymous: signedIn.account.isAnonymous)
    if signedIn.isNewUser {
      env.logger.info(
        "account made from a Firebase ID token",
        [
          "project_id": .string(project.projectID), "uid": .string(signedIn.account.localID),
          "is_anon": .bool(signedIn.account.isAnonymous), "provider": .string(signedIn.signInProvider),
          "request_id": .string(context.requestID),
        ])
    }
    return try await authResponse(
      project: project, account: signedIn.account, identities: signedIn.identities,
      signInProvider: signedIn.signInProvider, authTime: signedIn.authTime, refreshToken: session.token,
      isNewUser: signedIn.isNewUser, admitted)
  }
}
