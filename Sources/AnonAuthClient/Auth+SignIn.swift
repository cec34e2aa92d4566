import Foundation

extension Auth {
  /// Signs in with a new anonymous account. When an anonymous user is already signed in,
  /// returns that user instead, as FirebaseAuth on iOS does.
  /// - Throws: `.operationNotAllowed`, `.tooManyRequests`, `.networkError`.
  public func signInAnonymously() async throws(AuthError) -> AuthDataResult {
    if let user = currentUser, user.isAnonymous {
      return AuthDataResult(
        user: user, additionalUserInfo: AdditionalUserInfo(providerID: "anonymous", isNewUser: false))
    }
    let reply = try await rest.accounts("signUp", SignUpBody(), as: SignInReply.self)
    return try await adopt(reply, providerID: "anonymous", isNewUser: true)
  }

  /// Creates a permanent account with an email and a password, and signs in to it.
  /// - Throws: `.emailAlreadyInUse`, `.invalidEmail`, `.weakPassword`,
  ///   `.operationNotAllowed`, `.tooManyRequests`.
  public func createUser(withEmail email: String, password: String) async throws(AuthError) -> AuthDataResult
  {
    let reply = try await rest.accounts(
      "signUp", SignUpBody(email: email, password: password), as: SignInReply.self)
    return try await adopt(reply, providerID: EmailAuthProvider.id, isNewUser: true)
  }

  /// Signs in with an email and a password, replacing the signed-in user.
  /// - Throws: `.invalidCredential` (AnonAuth does not say whether the email or the
  ///   password was wrong), `.wrongPassword`, `.userNotFound`, `.userDisabled`,
  ///   `.tooManyRequests`.
  public func signIn(withEmail email: String, password: String) async throws(AuthError) -> AuthDataResult {
    let reply = try await rest.accounts(
      "signInWithPassword", SignInWithPasswordBody(email: email, password: password), as: SignInReply.self)
    return try await adopt(reply, providerID: EmailAuthProvider.id, isNewUser: false)
  }

  /// Signs in with a credential, replacing the signed-in user (an anonymous one too, as
  /// FirebaseAuth does); the first sign-in with a provider identity creates the account.
  /// - Throws: `.invalidCredential`, `.operationNotAllowed`, `.emailAlreadyInUse`,
  ///   `.userDisabled`, `.tooManyRequests`.
  public func signIn(with credential: AuthCredential) async throws(AuthError) -> AuthDataResult {
    if credential.provider == EmailAuthProvider.id {
      return try await signIn(withEmail: credential.email, password: credential.password)
    }
    let reply = try await rest.accounts(
      "signInWithIdp", SignInWithIdpBody(postBody: credential.postBody), as: SignInReply.self)
    try Self.checkIdpReply(reply, credential: credential)
    return try await adopt(reply, providerID: credential.provider, isNewUser: reply.isNewUser ?? false)
  }

  /// `signInWithIdp` answers 200 with `errorMessage` when the identity belongs to another
  /// user; that is an error, carrying the credential that signs in to the other user.
  static func checkIdpReply(_ reply: SignInReply, credential: AuthCredential) throws(AuthError) {
    guard let message = reply.errorMessage, !message.isEmpty else { return }
    let updated = AuthCredential(
      provider: reply.providerId ?? credential.provider, idToken: reply.oauthIdToken ?? credential.idToken,
      accessToken: reply.oauthAccessToken ?? credential.accessToken, nonce: credential.nonce)
    throw AuthError(AuthError.code(ofServerMessage: message), message: message, updatedCredential: updated)
  }

  /// Makes the answer of a sign-in or link the session: reads the account with
  /// `accounts:lookup` (as Firebase's SDKs do) to know its email and providers.
  func adopt(_ reply: SignInReply, providerID: String, isNewUser: Bool) async throws(AuthError)
    -> AuthDataResult
  {
    guard let idToken = reply.idToken, let refreshToken = reply.refreshToken, let uid = reply.localId else {
      throw AuthError(.internalError, message: "the answer has no idToken, refreshToken or localId")
    }
    let expiration = Date().addingTimeInterval(Self.seconds(reply.expiresIn))
    let session = try await describe(
      Session(
        uid: uid, idToken: idToken, refreshToken: refreshToken, expirationDate: expiration,
        isAnonymous: providerID == "anonymous"))
    try replace(session)
    return AuthDataResult(
      user: User(auth: self, session: session),
      additionalUserInfo: AdditionalUserInfo(providerID: providerID, isNewUser: isNewUser))
  }

  /// `session` with the user's email, name and providers as `accounts:lookup` has them.
  func describe(_ session: Session) async throws(AuthError) -> Session {
    let reply = try await rest.accounts("lookup", IDTokenBody(idToken: session.idToken), as: LookupReply.self)
    guard let record = reply.users?.first, record.localId == session.uid else {
      throw AuthError(.userNotFound, message: "accounts:lookup did not return the user")
    }
    var described = session
    described.email = record.email.flatMap { $0.isEmpty ? nil : $0 }
    described.displayName = record.displayName.flatMap { $0.isEmpty ? nil : $0 }
    described.providerData = (record.providerUserInfo ?? []).map {
      UserInfo(
        providerID: $0.providerId, uid: $0.rawId ?? $0.federatedId ?? $0.email ?? "", email: $0.email,
        displayName: $0.displayName)
    }
    described.isAnonymous = described.providerData.isEmpty && described.email == nil
    return described
  }

  /// Firebase's `expiresIn`: a string of seconds; an hour when missing or unreadable.
  static func seconds(_ expiresIn: String?) -> TimeInterval {
    expiresIn.flatMap { TimeInterval($0) } ?? 3600
  }
}
