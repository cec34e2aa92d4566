import Foundation

extension User {
  /// Links a credential to this user: the uid stays, an anonymous user becomes permanent.
  /// Email and password go through `accounts:signUp` with the user's ID token, provider
  /// tokens through `accounts:signInWithIdp`, as Firebase's SDKs send them.
  /// - Throws: `.credentialAlreadyInUse` (with `updatedCredential` when the server gave
  ///   one), `.emailAlreadyInUse`, `.providerAlreadyLinked`, `.invalidCredential`,
  ///   `.weakPassword`, `.invalidEmail`, `.requiresRecentLogin`, `.userTokenExpired`.
  public func link(with credential: AuthCredential) async throws(AuthError) -> AuthDataResult {
    let reply = try await auth.withIDToken(of: uid) { token throws(AuthError) -> SignInReply in
      if credential.provider == EmailAuthProvider.id {
        return try await auth.rest.accounts(
          "signUp", SignUpBody(email: credential.email, password: credential.password, idToken: token),
          as: SignInReply.self)
      }
      let reply = try await auth.rest.accounts(
        "signInWithIdp", SignInWithIdpBody(postBody: credential.postBody, idToken: token),
        as: SignInReply.self)
      try Auth.checkIdpReply(reply, credential: credential)
      return reply
    }
    return try await auth.adopt(reply, providerID: credential.provider, isNewUser: false)
  }

  /// Removes a provider from this user with `accounts:update` (`deleteProvider`).
  /// - Throws: `.noSuchProvider`, `.requiresRecentLogin`.
  /// - Returns: the user as it is now.
  @discardableResult
  public func unlink(fromProvider provider: String) async throws(AuthError) -> User {
    try await auth.withIDToken(of: uid) { token throws(AuthError) -> User in
      let reply = try await auth.rest.accounts(
        "update", UpdateBody(idToken: token, deleteProvider: [provider]), as: UpdateReply.self)
      guard var session = auth.state.withLock({ $0.session }), session.uid == uid else {
        throw AuthError(.nullUser)
      }
      if let idToken = reply.idToken, let refreshToken = reply.refreshToken {
        session.idToken = idToken
        session.refreshToken = refreshToken
        session.expirationDate = Date().addingTimeInterval(Auth.seconds(reply.expiresIn))
      }
      let described = try await auth.describe(session)
      try auth.replace(described, when: { $0?.uid == uid })
      return User(auth: auth, session: described)
    }
  }
}
