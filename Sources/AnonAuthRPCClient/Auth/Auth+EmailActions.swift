import AnonAuthWire

extension Auth {
  // The email actions with FirebaseAuth's names, over the native protocol.

  /// Asks the server to mail a password-reset link (answered the same whether or not an
  /// account has the address, under the project's enumeration protection).
  public func sendPasswordReset(withEmail email: String) async throws(AuthError) {
    var request = SendOobCodeRequest()
    request.requestType = "PASSWORD_RESET"
    request.email = email
    let _: SendOobCodeResponse = try await accounts.sendOobCode(request)
  }

  /// Asks the server to mail a sign-in link to `email` that leads on to `continueURL` (on
  /// one of the project's authorized domains).
  public func sendSignInLink(toEmail email: String, continueURL: String) async throws(AuthError) {
    var request = SendOobCodeRequest()
    request.requestType = "EMAIL_SIGNIN"
    request.email = email
    request.settings = ActionCodeSettings(continueUrl: continueURL, canHandleCodeInApp: true)
    let _: SendOobCodeResponse = try await accounts.sendOobCode(request)
  }

  /// The address a password-reset code was sent to, without using it.
  public func verifyPasswordResetCode(_ code: String) async throws(AuthError) -> String {
    let answer: ResetPasswordResponse = try await accounts.resetPassword(ResetPasswordRequest(oobCode: code))
    return answer.email
  }

  /// Sets a new password with a reset code: every session of the account ends.
  public func confirmPasswordReset(withCode code: String, newPassword: String) async throws(AuthError) {
    let _: ResetPasswordResponse = try await accounts.resetPassword(
      ResetPasswordRequest(oobCode: code, newPassword: newPassword))
  }

  /// Applies a verification or email-change code.
  public func applyActionCode(_ code: String) async throws(AuthError) {
    let _: AccountInfo = try await accounts.applyActionCode(ApplyActionCodeRequest(oobCode: code))
  }

  /// Signs in with a sign-in link's code and the address it was sent to (the account is
  /// made on first use), replacing the signed-in user.
  public func signIn(withEmail email: String, linkCode code: String) async throws(AuthError) -> AuthDataResult
  {
    let response: AuthResponse = try await accounts.signInWithEmailLink(
      SignInWithEmailLinkRequest(email: email, oobCode: code))
    return try result(response)
  }
}

extension User {
  /// Links the address of a sign-in link to this user (its code and the address it was
  /// sent to): the uid stays, an anonymous user becomes permanent with a verified email.
  public func link(withEmail email: String, linkCode code: String) async throws(AuthError) -> AuthDataResult {
    let request = SignInWithEmailLinkRequest(email: email, oobCode: code, idToken: try await getIDToken())
    let response: AuthResponse = try await auth.accounts.signInWithEmailLink(request)
    return try auth.result(response)
  }

  /// Asks the server to mail this user a link that verifies its email.
  public func sendEmailVerification() async throws(AuthError) {
    var request = SendOobCodeRequest()
    request.requestType = "VERIFY_EMAIL"
    request.idToken = try await getIDToken()
    let _: SendOobCodeResponse = try await auth.accounts.sendOobCode(request)
  }
}
