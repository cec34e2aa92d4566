/// Why an `Auth` or `User` call failed, with the case names of FirebaseAuth's
/// `AuthErrorCode`.
public enum AuthErrorCode: String, Sendable, CaseIterable {
  case invalidAPIKey
  case operationNotAllowed
  case tooManyRequests
  /// The ID token was refused; the user has been signed out.
  case invalidUserToken
  /// The session ended on the server (revoked, or the password changed); signed out.
  case userTokenExpired
  case userNotFound
  case userDisabled
  case invalidEmail
  case weakPassword
  case emailAlreadyInUse
  case wrongPassword
  /// A wrong email or password (the server does not say which), or a provider token that
  /// does not verify.
  case invalidCredential
  /// The provider identity belongs to another account; the error's `updatedCredential`
  /// signs in to it when the server gives one.
  case credentialAlreadyInUse
  case providerAlreadyLinked
  case noSuchProvider
  case requiresRecentLogin
  /// No user is signed in.
  case nullUser
  /// The server could not be reached, or did not answer with Firebase's JSON.
  case networkError
  /// The session could not be kept by the `SessionStore`.
  case keychainError
  /// Anything else the server said; the error's `message` has its words.
  case internalError
}
