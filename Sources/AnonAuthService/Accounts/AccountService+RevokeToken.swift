import AnonAuthWire

extension AccountService {
  /// Firebase's `accounts:revokeToken`: revokes the signed-in user's Sign in with Apple
  /// tokens at Apple (`AppleRevocation`), from the authorization code the app has just
  /// received from Apple. Apple asks apps to do it when they delete an account; the
  /// account itself is not changed. The outcome is logged (never the code or a token).
  /// A code Apple refuses counts against the caller's IP in the identity-provider
  /// throttle (30 failures in 10 minutes, then `TOO_MANY_ATTEMPTS_TRY_LATER`).
  /// - Throws: `INVALID_ARGUMENT` for another provider, another token type or no token;
  ///   `OPERATION_NOT_ALLOWED` when apple.com is off or has no revocation key;
  ///   `INVALID_IDP_RESPONSE` when Apple refuses the code or cannot be reached; the ID
  ///   token's errors.
  public func revokeToken(_ request: RevokeTokenRequest, context: CallContext) async throws(RPCError)
    -> RevokeTokenResponse
  {
    let project = try env.project(context)
    guard request.providerId == ProviderSettings.apple else {
      throw RPCError(.invalidArgument, "only apple.com tokens can be revoked")
    }
    guard request.tokenType == 3 else {
      throw RPCError(.invalidArgument, "token_type must be 3 (an authorization code)")
    }
    guard !request.token.isEmpty, request.token.utf8.count <= 4096 else {
      throw RPCError(.invalidArgument, "token must be the authorization code (at most 4096 bytes)")
    }
    let claims = try env.minter.verify(request.idToken, projectID: project.projectID)
    let account = try await self.account(for: claims, project: project, log: context.log).account
    let config = try ProviderSettings.config(
      ProviderSettings.apple, project: project, masterKey: env.masterKey)
    var fields: [String: LogValue] = [
      "project_id": .string(project.projectID), "uid": .string(account.localID), "provider": "apple.com",
      "request_id": .string(context.requestID),
    ]
    do {
      // Under the per-IP identity-provider throttle, as a sign-in's verification: codes
      // Apple refuses count as failed attempts.
      let outcome = try await env.admitting(context, project: project) {
        admitted async throws(RPCError) -> AppleRevocation.Outcome in
        let revocation = AppleRevocation(config: config, outbound: env.linking.outbound(admitted))
        return try await throttledVerification(project: project, context: context) {
          () async throws(RPCError) in
          try await revocation.revoke(
            authorizationCode: request.token, nowSeconds: env.clock.nowSeconds(), admitted)
        }
      }
      fields["client_id"] = .string(outcome.clientID)
      fields["attempts"] = .int(Int64(outcome.attempts))
      env.logger.info("provider token revoked", fields)
    } catch {
      fields["reason"] = .string(error.reason)
      fields["why"] = .string(error.message)
      env.logger.warning("provider token not revoked", fields)
      throw error
    }
    return RevokeTokenResponse()
  }
}
