import Foundation

extension Auth {
  /// Signs in with a new anonymous account. When an anonymous user is already signed in,
  /// returns that user instead, as FirebaseAuth on iOS does. While the saved session
  /// cannot be read (a Keychain before first unlock), refuses rather than make a second
  /// account for a user who may have one.
  /// - Throws: `.keychainError` (the saved session cannot be read yet),
  ///   `.operationNotAllowed`, `.tooManyRequests`, `.networkError`.
  @discardableResult
  public func signInAnonymously() async throws -> AuthDataResult {
    settleStore()
    let (unread, current) = state.withLock { ($0.storeUnread, $0.user) }
    if unread {
      throw AuthError(
        .keychainError,
        message: "the saved session cannot be read yet (device locked); try again after unlock")
    }
    if let current, current.isAnonymous {
      return AuthDataResult(
        user: current, additionalUserInfo: AdditionalUserInfo(providerID: "anonymous", isNewUser: false))
    }
    let reply = try await rest.accounts("signUp", SignUpBody(), as: SignInReply.self)
    return try await adopt(reply, providerID: "anonymous", isNewUser: true)
  }

  /// Creates a permanent account with an email and a password, and signs in to it.
  /// - Throws: `.emailAlreadyInUse`, `.invalidEmail`, `.weakPassword`,
  ///   `.operationNotAllowed`, `.tooManyRequests`.
  @discardableResult
  public func createUser(withEmail email: String, password: String) async throws -> AuthDataResult {
    let reply = try await rest.accounts(
      "signUp", SignUpBody(email: email, password: password), as: SignInReply.self)
    return try await adopt(reply, providerID: EmailAuthProvider.id, isNewUser: true)
  }

  /// Signs in with an email and a password, replacing the signed-in user.
  /// - Throws: `.invalidCredential` (AnonAuth does not say whether the email or the
  ///   password was wrong), `.wrongPassword`, `.userNotFound`, `.userDisabled`,
  ///   `.tooManyRequests`.
  @discardableResult
  public func signIn(withEmail email: String, password: String) async throws -> AuthDataResult {
    let reply = try await rest.accounts(
      "signInWithPassword", SignInWithPasswordBody(email: email, password: password), as: SignInReply.self)
    return try await adopt(reply, providerID: EmailAuthProvider.id, isNewUser: false)
  }

  /// Signs in with a credential, replacing the signed-in user (an anonymous one too, as
  /// FirebaseAuth does); the first sign-in with a provider identity creates the account.
  /// - Throws: `.invalidCredential`, `.operationNotAllowed` (a provider the project or
  ///   the server does not offer, such as apple.com today), `.emailAlreadyInUse`,
  ///   `.userDisabled`, `.tooManyRequests`.
  @discardableResult
  public func signIn(with credential: AuthCredential) async throws -> AuthDataResult {
    if credential.provider == EmailAuthProvider.id {
      if !credential.link.isEmpty {
        return try await signIn(withEmail: credential.email, link: credential.link)
      }
      return try await signIn(withEmail: credential.email, password: credential.password)
    }
    let reply = try await rest.accounts(
      "signInWithIdp", SignInWithIdpBody(postBody: credential.postBody), as: SignInReply.self)
    try Self.checkIdpReply(reply, credential: credential)
    return try await adopt(reply, providerID: credential.provider, isNewUser: reply.isNewUser ?? false)
  }

  /// Asks the server to email a password-reset link. Under the project's email
  /// enumeration protection (on by default) it succeeds whether or not an account has
  /// the address.
  public func sendPasswordReset(withEmail email: String) async throws {
    _ = try await rest.accounts(
      "sendOobCode", OobCodeBody(requestType: "PASSWORD_RESET", email: email), as: EmptyReply.self)
  }

  /// `signInWithIdp` answers 200 with `errorMessage` when the identity belongs to another
  /// user; that is an error, carrying the credential that signs in to the other user.
  static func checkIdpReply(_ reply: SignInReply, credential: AuthCredential) throws(AuthError) {
    guard let message = reply.errorMessage, !message.isEmpty else { return }
    let updated = OAuthCredential(
      provider: reply.providerId ?? credential.provider,
      idToken: reply.oauthIdToken ?? credential.idTokenValue,
      accessToken: reply.oauthAccessToken ?? credential.accessTokenValue, nonce: credential.nonce)
    throw AuthError(
      AuthError.code(ofServerMessage: message), message: message, updatedCredential: updated,
      email: reply.email)
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
    guard let user = try replace(session) else { throw AuthError(.nullUser) }
    let profile = reply.rawUserInfo.flatMap {
      (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
    }
    var credential: OAuthCredential?
    if reply.oauthIdToken != nil || reply.oauthAccessToken != nil {
      credential = OAuthCredential(
        provider: providerID, idToken: reply.oauthIdToken ?? "", accessToken: reply.oauthAccessToken ?? "")
    }
    return AuthDataResult(
      user: user,
      additionalUserInfo: AdditionalUserInfo(
        providerID: providerID, isNewUser: isNewUser, profile: profile, username: reply.screenName),
      credential: credential)
  }

  /// `session` with the user as `accounts:lookup` has them: email, name, photo,
  /// verification, dates and providers.
  func describe(_ session: Session) async throws(AuthError) -> Session {
    let reply = try await rest.accounts("lookup", IDTokenBody(idToken: session.idToken), as: LookupReply.self)
    guard let record = reply.users?.first, record.localId == session.uid else {
      throw AuthError(.userNotFound, message: "accounts:lookup did not return the user")
    }
    func nonEmpty(_ value: String?) -> String? { value.flatMap { $0.isEmpty ? nil : $0 } }
    var described = session
    described.email = nonEmpty(record.email)
    described.displayName = nonEmpty(record.displayName)
    described.photoURL = nonEmpty(record.photoUrl).flatMap(URL.init(string:))
    described.phoneNumber = nonEmpty(record.phoneNumber)
    described.emailVerified = record.emailVerified
    described.creationDate = Self.date(milliseconds: record.createdAt)
    described.lastSignInDate = Self.date(milliseconds: record.lastLoginAt)
    described.providerData = (record.providerUserInfo ?? []).map {
      ProviderUserInfo(
        providerID: $0.providerId, uid: $0.rawId ?? $0.federatedId ?? $0.email ?? "", email: $0.email,
        displayName: $0.displayName, photoURL: nonEmpty($0.photoUrl).flatMap(URL.init(string:)),
        phoneNumber: $0.phoneNumber)
    }
    described.isAnonymous = described.providerData.isEmpty && described.email == nil
    return described
  }

  /// Firebase's `expiresIn`: a string of seconds; an hour when missing or unreadable.
  static func seconds(_ expiresIn: String?) -> TimeInterval {
    expiresIn.flatMap { TimeInterval($0) } ?? 3600
  }

  /// `createdAt` and `lastLoginAt`: strings of epoch milliseconds.
  static func date(milliseconds: String?) -> Date? {
    milliseconds.flatMap { Double($0) }.map { Date(timeIntervalSince1970: $0 / 1000) }
  }
}
