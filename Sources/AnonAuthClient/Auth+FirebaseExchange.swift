extension Auth {
  /// Moves a device that is signed in to Firebase onto AnonAuth: exchanges the Firebase
  /// ID token for a session on the account with the same uid (AnonAuth's
  /// `accounts:signInWithFirebaseIdToken`, not part of Firebase's API), replacing the
  /// signed-in user. `additionalUserInfo.providerID` is the token's sign-in provider.
  /// - Throws: `.invalidCredential` (a token AnonAuth does not accept),
  ///   `.userNotFound`, `.userDisabled`, `.operationNotAllowed`, `.tooManyRequests`.
  public func signIn(withFirebaseIDToken idToken: String) async throws(AuthError) -> AuthDataResult {
    let reply = try await rest.accounts(
      "signInWithFirebaseIdToken", FirebaseIDTokenBody(idToken: idToken), as: SignInReply.self)
    return try await adopt(
      reply, providerID: reply.providerId ?? "anonymous", isNewUser: reply.isNewUser ?? false)
  }
}
