import AnonAuthWire

extension User {
  /// Links a credential to this user. The uid stays the same; an anonymous user becomes
  /// permanent. The session is replaced by the one the link returns (older ID tokens of
  /// the account are revoked by the link).
  /// - Throws: `.credentialAlreadyInUse` (the identity belongs to another account),
  ///   `.emailAlreadyInUse`, `.providerAlreadyLinked`, `.invalidCredential`,
  ///   `.weakPassword`, `.invalidEmail`, `.operationNotAllowed`, `.userDisabled`,
  ///   `.userTokenExpired`.
  public func link(with credential: AuthCredential) async throws(AuthError) -> AuthDataResult {
    let request = LinkWithCredentialRequest(idToken: try await getIDToken(), credential: credential.wire)
    let response: AuthResponse = try await auth.accounts.linkWithCredential(request)
    return try auth.result(response)
  }

  /// Removes a provider from this user; `password` takes the email with it. The user
  /// stays permanent.
  /// - Throws: `.noSuchProvider`.
  /// - Returns: the user as it is now.
  @discardableResult
  public func unlink(fromProvider provider: String) async throws(AuthError) -> User {
    let request = UnlinkProviderRequest(idToken: try await getIDToken(), providerId: provider)
    let info: AccountInfo = try await auth.accounts.unlinkProvider(request)
    if var session = auth.currentSession, session.uid == uid {
      session.email = info.email
      session.isAnonymous = info.isAnonymous
      try auth.replace(session)
    }
    return User(auth: auth, uid: uid, isAnonymous: info.isAnonymous)
  }
}
