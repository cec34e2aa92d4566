// App code written to FirebaseAuth 12's public API. The only line that differs from the
// FirebaseAuth build of this file is the import below (`@preconcurrency import
// FirebaseAuth`: FirebaseAuth's Auth, User and AuthDataResult are not Sendable, so Swift 6
// main-actor code imports it so; AnonAuthClient's types are, and the attribute changes
// nothing here).
@preconcurrency import AnonAuthClient
import Foundation

/// What the app shows about the signed-in user.
public struct AccountSummary: Sendable, Equatable {
  public var uid: String
  public var isAnonymous: Bool
  public var email: String?
  public var displayName: String?
  public var photoURL: URL?
  public var phoneNumber: String?
  public var isEmailVerified: Bool
  public var providers: [String]
  public var created: Date?
  public var lastSignIn: Date?
  public var hasRefreshToken: Bool
}

/// A typical app's auth layer over FirebaseAuth: anonymous first, upgraded later with
/// an email or a provider, with the errors turned into messages for the UI.
@MainActor public final class AuthService {
  private let auth: Auth
  private var stateHandle: NSObjectProtocol?
  private var tokenHandle: NSObjectProtocol?
  /// The users the state listener heard, in order ("nil" when signed out).
  public private(set) var heardUsers: [String] = []
  /// How many times the ID-token listener was called.
  public private(set) var tokenChanges = 0
  /// True while every listener call came on the main thread.
  public private(set) var listenersOnMainThread = true

  public init(auth: Auth = Auth.auth()) {
    self.auth = auth
  }

  public func start() {
    stateHandle = auth.addStateDidChangeListener { [weak self] _, user in
      guard let self else { return }
      self.listenersOnMainThread = self.listenersOnMainThread && MainQueue.isCurrent
      self.heardUsers.append(user?.uid ?? "nil")
    }
    tokenHandle = auth.addIDTokenDidChangeListener { [weak self] _, _ in
      guard let self else { return }
      self.listenersOnMainThread = self.listenersOnMainThread && MainQueue.isCurrent
      self.tokenChanges += 1
    }
  }

  public func stop() {
    if let stateHandle { auth.removeStateDidChangeListener(stateHandle) }
    if let tokenHandle { auth.removeIDTokenDidChangeListener(tokenHandle) }
    stateHandle = nil
    tokenHandle = nil
  }

  /// The signed-in user, signing in anonymously when nobody is.
  public func ensureSignedIn() async throws -> User {
    if let user = auth.currentUser { return user }
    let result = try await auth.signInAnonymously()
    return result.user
  }

  /// Makes the anonymous account permanent with an email and a password.
  public func upgrade(email: String, password: String) async throws -> User {
    let user = try await ensureSignedIn()
    let credential = EmailAuthProvider.credential(withEmail: email, password: password)
    let result = try await user.link(with: credential)
    return result.user
  }

  /// Links a Google account; when it already belongs to another account, signs in to
  /// that one with the credential the error carries, as Firebase's guides show.
  public func upgrade(googleIDToken: String, accessToken: String) async throws -> AuthDataResult {
    let user = try await ensureSignedIn()
    let credential = GoogleAuthProvider.credential(withIDToken: googleIDToken, accessToken: accessToken)
    do {
      return try await user.link(with: credential)
    } catch {
      let error = error as NSError
      guard AuthErrorCode(rawValue: error.code) == .credentialAlreadyInUse,
        let updated = error.userInfo[AuthErrors.userInfoUpdatedCredentialKey] as? AuthCredential
      else { throw error }
      return try await auth.signIn(with: updated)
    }
  }

  /// Sign in with Apple, from the token and nonce of `ASAuthorizationAppleIDCredential`.
  public func signInWithApple(
    idToken: String, rawNonce: String, fullName: PersonNameComponents?
  ) async throws -> AuthDataResult {
    let credential = OAuthProvider.appleCredential(
      withIDToken: idToken, rawNonce: rawNonce, fullName: fullName)
    return try await auth.signIn(with: credential)
  }

  /// A configured OpenID Connect provider.
  public func signIn(oidc name: String, idToken: String, rawNonce: String) async throws -> AuthDataResult {
    let credential = OAuthProvider.credential(
      providerID: AuthProviderID.custom("oidc.\(name)"), idToken: idToken, rawNonce: rawNonce,
      accessToken: nil)
    let result = try await auth.signIn(with: credential)
    _ = result.additionalUserInfo?.profile?["email"]
    _ = result.credential?.idToken
    return result
  }

  public func summary() -> AccountSummary? {
    guard let user = auth.currentUser else { return nil }
    return AccountSummary(
      uid: user.uid, isAnonymous: user.isAnonymous, email: user.email, displayName: user.displayName,
      photoURL: user.photoURL, phoneNumber: user.phoneNumber, isEmailVerified: user.isEmailVerified,
      providers: user.providerData.map { $0.providerID }, created: user.metadata.creationDate,
      lastSignIn: user.metadata.lastSignInDate, hasRefreshToken: user.refreshToken != nil)
  }

  /// The sign-in provider and a custom claim of the current ID token.
  public func tokenDetails(forcingRefresh: Bool) async throws -> (
    provider: String, role: String?, expires: Date
  ) {
    guard let user = auth.currentUser else { throw NSError(domain: "App", code: 1) }
    let result = try await user.getIDTokenResult(forcingRefresh: forcingRefresh)
    return (result.signInProvider, result.claims["role"] as? String, result.expirationDate)
  }

  /// The header the app's own backend checks.
  public func authorizationHeader() async throws -> String {
    guard let user = auth.currentUser else { throw NSError(domain: "App", code: 1) }
    let token = try await user.getIDToken()
    return "Bearer \(token)"
  }

  public func changePassword(email: String, current: String, new: String) async throws {
    guard let user = auth.currentUser else { throw NSError(domain: "App", code: 1) }
    let credential = EmailAuthProvider.credential(withEmail: email, password: current)
    try await user.reauthenticate(with: credential)
    try await user.updatePassword(to: new)
  }

  public func rename(to name: String) async throws {
    guard let user = auth.currentUser else { throw NSError(domain: "App", code: 1) }
    let change = user.createProfileChangeRequest()
    change.displayName = name
    try await change.commitChanges()
  }

  public func setPhoto(_ url: URL?) async throws {
    guard let user = auth.currentUser else { throw NSError(domain: "App", code: 1) }
    let change = user.createProfileChangeRequest()
    change.photoURL = url
    try await change.commitChanges()
  }

  public func refreshProfile() async throws {
    try await auth.currentUser?.reload()
  }

  public func removeProvider(_ providerID: String) async throws -> User? {
    try await auth.currentUser?.unlink(fromProvider: providerID)
  }

  public func sendPasswordReset(to email: String) async throws {
    try await auth.sendPasswordReset(withEmail: email)
  }

  public func sendVerificationEmail() async throws {
    try await auth.currentUser?.sendEmailVerification()
  }

  public func signOut() throws {
    try auth.signOut()
  }

  public func deleteAccount() async throws {
    try await auth.currentUser?.delete()
  }

  /// Shares the session with the app's extensions.
  public func shareWithExtensions(accessGroup: String) throws {
    try auth.useUserAccessGroup(accessGroup)
  }

  /// Makes a user of another `Auth` instance the current one.
  public func adopt(_ user: User) async throws {
    try await auth.updateCurrentUser(user)
  }

  public func useLanguage(_ code: String?) {
    if let code { auth.languageCode = code } else { auth.useAppLanguage() }
  }

  /// The message the UI shows for an error of any of the calls above.
  public nonisolated static func message(for error: Error) -> String {
    let error = error as NSError
    guard error.domain == AuthErrors.domain, let code = AuthErrorCode(rawValue: error.code) else {
      return error.localizedDescription
    }
    switch code {
    case .emailAlreadyInUse:
      let email = error.userInfo[AuthErrors.userInfoEmailKey] as? String
      return "\(email ?? "This email") already has an account. Sign in instead."
    case .credentialAlreadyInUse: return "This account is linked to another user."
    case .weakPassword: return "Choose a longer password."
    case .invalidEmail: return "Check the email address."
    case .wrongPassword, .invalidCredential: return "The email or the password is wrong."
    case .userNotFound, .userDisabled: return "This account is no longer available."
    case .requiresRecentLogin: return "Sign in again to do this."
    case .networkError: return "You seem to be offline."
    case .tooManyRequests: return "Too many attempts. Try again later."
    case .userTokenExpired, .invalidUserToken: return "Your session has ended. Sign in again."
    default: return error.localizedDescription
    }
  }
}
