extension Auth {
  /// The completion-handler forms of the sign-ins, as FirebaseAuth has them: `completion`
  /// runs once, asynchronously on `callbackQueue` (the main queue).
  public func signInAnonymously(completion: ((AuthDataResult?, (any Error)?) -> Void)? = nil) {
    deliver(completion) { try await self.signInAnonymously() }
  }

  public func createUser(
    withEmail email: String, password: String, completion: ((AuthDataResult?, (any Error)?) -> Void)? = nil
  ) {
    deliver(completion) { try await self.createUser(withEmail: email, password: password) }
  }

  public func signIn(
    withEmail email: String, password: String, completion: ((AuthDataResult?, (any Error)?) -> Void)? = nil
  ) {
    deliver(completion) { try await self.signIn(withEmail: email, password: password) }
  }

  public func signIn(
    with credential: AuthCredential, completion: ((AuthDataResult?, (any Error)?) -> Void)? = nil
  ) {
    deliver(completion) { try await self.signIn(with: credential) }
  }

  public func sendPasswordReset(withEmail email: String, completion: (((any Error)?) -> Void)? = nil) {
    deliver(completion) { try await self.sendPasswordReset(withEmail: email) }
  }

  /// Makes `user` (of this or another `Auth` of the project) the current user, as
  /// FirebaseAuth's `updateCurrentUser(_:)`.
  public func updateCurrentUser(_ user: User) async throws {
    try replace(user.session)
  }

  public func updateCurrentUser(_ user: User?, completion: (((any Error)?) -> Void)? = nil) {
    deliver(completion) {
      guard let user else { throw AuthError(.nullUser) }
      try await self.updateCurrentUser(user)
    }
  }
}
