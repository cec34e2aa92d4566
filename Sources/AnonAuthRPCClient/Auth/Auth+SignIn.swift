import AnonAuthWire

extension Auth {
  /// Creates a permanent account with an email and a password, and signs in to it.
  /// - Throws: `.emailAlreadyInUse`, `.invalidEmail`, `.weakPassword`,
  ///   `.operationNotAllowed`, `.tooManyRequests`.
  public func createUser(withEmail email: String, password: String) async throws(AuthError) -> AuthDataResult
  {
    var request = SignUpRequest()
    request.kind = .emailPassword(EmailPasswordSignUp(email: email, password: password))
    let response: AuthResponse = try await accounts.signUp(request)
    return try result(response)
  }

  /// Signs in with an email and a password, replacing the signed-in user.
  /// - Throws: `.wrongPasswordOrUser` (an unknown email and a wrong password alike),
  ///   `.userDisabled`, `.tooManyRequests`.
  public func signIn(withEmail email: String, password: String) async throws(AuthError) -> AuthDataResult {
    let response: AuthResponse = try await accounts.signInWithPassword(
      SignInWithPasswordRequest(email: email, password: password))
    return try result(response)
  }

  /// Signs in with a credential, replacing the signed-in user (an anonymous one too, as
  /// FirebaseAuth does); the first sign-in with a provider identity creates the account.
  /// - Throws: `.invalidCredential`, `.operationNotAllowed`, `.emailAlreadyInUse`,
  ///   `.userDisabled`, `.tooManyRequests`.
  public func signIn(with credential: AuthCredential) async throws(AuthError) -> AuthDataResult {
    if credential.provider == EmailAuthProvider.id {
      return try await signIn(withEmail: credential.email, password: credential.password)
    }
    let response: AuthResponse = try await accounts.signInWithIdp(
      SignInWithIdpRequest(credential: credential.wire))
    return try result(response)
  }

  func result(_ response: AuthResponse) throws(AuthError) -> AuthDataResult {
    AuthDataResult(
      user: try adopt(response), isNewUser: response.isNewUser, providerID: response.signInProvider)
  }
}
