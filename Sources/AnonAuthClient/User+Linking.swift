import Foundation

extension User {
  /// Links a credential to this user: the uid stays, an anonymous user becomes permanent,
  /// and this object (the current user) says so at once. Email and password go through
  /// `accounts:signUp` with the user's ID token, provider tokens through
  /// `accounts:signInWithIdp`, as Firebase's SDKs send them.
  /// - Throws: `.credentialAlreadyInUse` (the error's `userInfo` carries the credential
  ///   that signs in to the other account), `.emailAlreadyInUse`, `.providerAlreadyLinked`,
  ///   `.invalidCredential`, `.weakPassword`, `.invalidEmail`, `.requiresRecentLogin`,
  ///   `.userTokenExpired`.
  @discardableResult
  public func link(with credential: AuthCredential) async throws -> AuthDataResult {
    let auth = try self.auth
    let reply = try await auth.withIDToken(of: uid) { token throws(AuthError) -> SignInReply in
      if credential.provider == EmailAuthProvider.id, !credential.link.isEmpty {
        guard let code = Auth.signInCode(credential.link) else {
          throw AuthError(.invalidActionCode, message: "not a sign-in link")
        }
        return try await auth.rest.accounts(
          "signInWithEmailLink", EmailLinkBody(email: credential.email, oobCode: code, idToken: token),
          as: SignInReply.self)
      }
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
  /// - Returns: this user, updated.
  @discardableResult
  public func unlink(fromProvider provider: String) async throws -> User {
    try await change(UpdateBody(idToken: "", deleteProvider: [provider]))
    return self
  }

  /// Signs in again with `credential` to prove a recent sign-in (for a password change),
  /// keeping this user and its uid.
  /// - Throws: `.userMismatch` (the credential is another account's), `.invalidCredential`,
  ///   `.wrongPassword`, `.userNotFound`.
  @discardableResult
  public func reauthenticate(with credential: AuthCredential) async throws -> AuthDataResult {
    let auth = try self.auth
    let reply: SignInReply
    if credential.provider == EmailAuthProvider.id {
      reply = try await auth.rest.accounts(
        "signInWithPassword", SignInWithPasswordBody(email: credential.email, password: credential.password),
        as: SignInReply.self)
    } else {
      reply = try await auth.rest.accounts(
        "signInWithIdp", SignInWithIdpBody(postBody: credential.postBody), as: SignInReply.self)
      try Auth.checkIdpReply(reply, credential: credential)
    }
    guard reply.localId == uid else {
      throw AuthError(.userMismatch, message: "the credential signs in to another account")
    }
    guard auth.state.withLock({ $0.user === self }) else { throw AuthError(.nullUser) }
    return try await auth.adopt(reply, providerID: credential.provider, isNewUser: false)
  }

  /// Sets a new password; the server revokes the user's other sessions, and this one
  /// gets new tokens.
  /// - Throws: `.weakPassword`, `.requiresRecentLogin` (reauthenticate first).
  public func updatePassword(to password: String) async throws {
    try await change(UpdateBody(idToken: "", password: password))
  }

  /// Reads the user again from the server, updating this object.
  public func reload() async throws {
    let auth = try self.auth
    try await auth.withIDToken(of: uid) { _ throws(AuthError) in
      guard let session = auth.state.withLock({ $0.user?.session }), session.uid == uid else {
        throw AuthError(.nullUser)
      }
      try auth.replace(try await auth.describe(session), when: { $0?.uid == uid })
    }
  }

  /// Deletes the account on the server, then signs out.
  /// - Throws: `.requiresRecentLogin`, `.userTokenExpired`, `.networkError`.
  public func delete() async throws {
    let auth = try self.auth
    try await auth.withIDToken(of: uid) { token throws(AuthError) in
      _ = try await auth.rest.accounts("delete", IDTokenBody(idToken: token), as: EmptyReply.self)
    }
    try auth.replace(nil, when: { $0?.uid == uid })
  }

  /// Asks the server to email a link that verifies the user's email.
  public func sendEmailVerification() async throws {
    let auth = try self.auth
    try await auth.withIDToken(of: uid) { token throws(AuthError) in
      _ = try await auth.rest.accounts(
        "sendOobCode", OobCodeBody(requestType: "VERIFY_EMAIL", idToken: token), as: EmptyReply.self)
    }
  }

  /// A change of the user's name and photo, committed with `commitChanges()`.
  public func createProfileChangeRequest() -> UserProfileChangeRequest {
    UserProfileChangeRequest(user: self)
  }

  /// Sends `body` to `accounts:update` with the user's ID token, keeps the tokens it
  /// returns, and reads the user again.
  func change(_ body: UpdateBody) async throws(AuthError) {
    let auth = try self.auth
    try await auth.withIDToken(of: uid) { token throws(AuthError) in
      var body = body
      body.idToken = token
      let reply = try await auth.rest.accounts("update", body, as: UpdateReply.self)
      guard var session = auth.state.withLock({ $0.user?.session }), session.uid == uid else {
        throw AuthError(.nullUser)
      }
      if let idToken = reply.idToken, !idToken.isEmpty {
        session.idToken = idToken
        session.expirationDate = Date().addingTimeInterval(Auth.seconds(reply.expiresIn))
      }
      if let refreshToken = reply.refreshToken, !refreshToken.isEmpty { session.refreshToken = refreshToken }
      try auth.replace(try await auth.describe(session), when: { $0?.uid == uid })
    }
  }
}

/// A change of a user's display name and photo URL, as FirebaseAuth's
/// `UserProfileChangeRequest`: set the properties, then `commitChanges()`. An empty
/// name clears it. AnonAuth stores the display name; it does not store photo URLs yet
/// (the server ignores them).
public final class UserProfileChangeRequest: Sendable {
  private let user: User
  private let fields = Locked<(displayName: String?, photoURL: URL?)>((nil, nil))

  init(user: User) { self.user = user }

  public var displayName: String? {
    get { fields.withLock { $0.displayName } }
    set { fields.withLock { $0.displayName = newValue } }
  }

  public var photoURL: URL? {
    get { fields.withLock { $0.photoURL } }
    set { fields.withLock { $0.photoURL = newValue } }
  }

  /// Sends the change with `accounts:update`; the user object shows it once it returns.
  public func commitChanges() async throws {
    let (name, photo) = fields.withLock { ($0.displayName, $0.photoURL) }
    var body = UpdateBody(idToken: "")
    if let name {
      if name.isEmpty { body.deleteAttribute = ["DISPLAY_NAME"] } else { body.displayName = name }
    }
    body.photoUrl = photo?.absoluteString
    try await user.change(body)
  }

  public func commitChanges(completion: (((any Error)?) -> Void)? = nil) {
    user.deliver(completion) { try await self.commitChanges() }
  }
}
