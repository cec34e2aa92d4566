import AnonAuthWire

extension Auth {
  /// Moves a device from Firebase: exchanges the Firebase ID token of the user signed in
  /// with FirebaseAuth for a session on the AnonAuth account with the same uid (accounts
  /// imported from Firebase keep their uids), replacing the signed-in user. Call it once,
  /// on the first launch after the app moved, with `Auth.auth().currentUser`'s fresh ID
  /// token, then sign out of FirebaseAuth.
  ///
  /// The result's `isNewUser` is true only when the server made the account (the
  /// project's `firebase_create_unknown_users`); `providerID` is `anonymous` for an
  /// anonymous account.
  /// - Parameter idToken: a Firebase ID token of the project's configured Firebase
  ///   project; it is sent once and not kept.
  /// - Throws: `.operationNotAllowed` (the exchange is off), `.invalidCredential` (the
  ///   token does not verify), `.userNotFound`, `.userDisabled`, `.emailAlreadyInUse`,
  ///   `.tooManyRequests`.
  public func signIn(withFirebaseIDToken idToken: String) async throws(AuthError) -> AuthDataResult {
    let response: AuthResponse = try await accounts.signInWithFirebaseIdToken(
      SignInWithFirebaseIdTokenRequest(idToken: idToken))
    return try result(response)
  }
}
