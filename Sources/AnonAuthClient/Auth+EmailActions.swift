extension Auth {
  // FirebaseAuth's email actions (served by AnonAuth) and custom tokens (not served yet,
  // docs/http-api.md: its 404 is thrown as `.internalError`).

  /// Sets a new password with the code of a password-reset email.
  public func confirmPasswordReset(withCode code: String, newPassword: String) async throws {
    _ = try await rest.accounts(
      "resetPassword", ResetPasswordBody(oobCode: code, newPassword: newPassword), as: EmptyReply.self)
  }

  /// The email a password-reset code was sent to.
  public func verifyPasswordResetCode(_ code: String) async throws -> String {
    let reply = try await rest.accounts(
      "resetPassword", ResetPasswordBody(oobCode: code), as: SignInReply.self)
    return reply.email ?? ""
  }

  /// Applies the code of an email-verification email.
  public func applyActionCode(_ code: String) async throws {
    _ = try await rest.accounts("update", ActionCodeBody(oobCode: code), as: EmptyReply.self)
  }

  /// Signs in with a custom token minted by the app's server.
  @discardableResult
  public func signIn(withCustomToken token: String) async throws -> AuthDataResult {
    let reply = try await rest.accounts(
      "signInWithCustomToken", CustomTokenBody(token: token), as: SignInReply.self)
    return try await adopt(reply, providerID: "custom", isNewUser: reply.isNewUser ?? false)
  }

  public func confirmPasswordReset(
    withCode code: String, newPassword: String, completion: @escaping ((any Error)?) -> Void
  ) {
    deliver(completion) { try await self.confirmPasswordReset(withCode: code, newPassword: newPassword) }
  }

  public func verifyPasswordResetCode(_ code: String, completion: @escaping (String?, (any Error)?) -> Void) {
    deliver(completion) { try await self.verifyPasswordResetCode(code) }
  }

  public func applyActionCode(_ code: String, completion: @escaping ((any Error)?) -> Void) {
    deliver(completion) { try await self.applyActionCode(code) }
  }

  public func signIn(
    withCustomToken token: String, completion: ((AuthDataResult?, (any Error)?) -> Void)? = nil
  ) {
    deliver(completion) { try await self.signIn(withCustomToken: token) }
  }
}
