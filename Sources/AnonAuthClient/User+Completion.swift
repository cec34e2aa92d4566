extension User {
  /// The completion-handler forms of the user's calls, as FirebaseAuth has them:
  /// `completion` runs once, asynchronously on the `Auth`'s callback queue (the main queue).
  public func link(
    with credential: AuthCredential, completion: ((AuthDataResult?, (any Error)?) -> Void)? = nil
  ) {
    deliver(completion) { try await self.link(with: credential) }
  }

  public func unlink(fromProvider provider: String, completion: ((User?, (any Error)?) -> Void)? = nil) {
    deliver(completion) { try await self.unlink(fromProvider: provider) }
  }

  public func reauthenticate(
    with credential: AuthCredential, completion: ((AuthDataResult?, (any Error)?) -> Void)? = nil
  ) {
    deliver(completion) { try await self.reauthenticate(with: credential) }
  }

  public func updatePassword(to password: String, completion: (((any Error)?) -> Void)? = nil) {
    deliver(completion) { try await self.updatePassword(to: password) }
  }

  public func reload(completion: (((any Error)?) -> Void)? = nil) {
    deliver(completion) { try await self.reload() }
  }

  public func delete(completion: (((any Error)?) -> Void)? = nil) {
    deliver(completion) { try await self.delete() }
  }

  public func sendEmailVerification(completion: (((any Error)?) -> Void)? = nil) {
    deliver(completion) { try await self.sendEmailVerification() }
  }
}
