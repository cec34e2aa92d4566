/// Why an `Auth` or `User` call failed: FirebaseAuth's `AuthErrorCode`, with its case
/// names and its integer values (17000...), for every error an anonymous-first flow here
/// can meet. `(error as NSError).code` is the raw value and `AuthErrorCode(rawValue:)`
/// reads it back, as in a Firebase app.
public enum AuthErrorCode: Int, Sendable, CaseIterable {
  /// A provider token that does not verify, or a wrong email or password (the server
  /// does not say which).
  case invalidCredential = 17004
  case userDisabled = 17005
  /// The project does not allow this way of signing in (or the server does not offer it,
  /// as for Apple's provider).
  case operationNotAllowed = 17006
  case emailAlreadyInUse = 17007
  case invalidEmail = 17008
  case wrongPassword = 17009
  case tooManyRequests = 17010
  case userNotFound = 17011
  case accountExistsWithDifferentCredential = 17012
  case requiresRecentLogin = 17014
  case providerAlreadyLinked = 17015
  case noSuchProvider = 17016
  /// The ID token was refused; the user has been signed out.
  case invalidUserToken = 17017
  /// The server could not be reached, or did not answer with Firebase's JSON.
  case networkError = 17020
  /// The session ended on the server (revoked, or the password changed); signed out.
  case userTokenExpired = 17021
  case invalidAPIKey = 17023
  /// `reauthenticate(with:)` signed in to another account than the user's.
  case userMismatch = 17024
  /// The provider identity belongs to another account; the error carries the credential
  /// that signs in to it (`AuthErrors.userInfoUpdatedCredentialKey`).
  case credentialAlreadyInUse = 17025
  case weakPassword = 17026
  case missingEmail = 17034
  /// No user is signed in, or the call was made on a user who is no longer the current one.
  case nullUser = 17067
  /// The session store failed: the Keychain is locked (before the first unlock after a
  /// restart) or refused the item. The session is read again later; nothing was lost.
  case keychainError = 17995
  /// Anything else the server said, or a call the server does not offer (email actions);
  /// the error's `message` has its words.
  case internalError = 17999
  /// An ID token that is not a JWT.
  case malformedJWT = 18000

  /// Firebase's short name of the code (`ERROR_EMAIL_ALREADY_IN_USE`), under
  /// `AuthErrors.userInfoNameKey`.
  public var name: String {
    if self == .invalidAPIKey { return "ERROR_INVALID_API_KEY" }
    var name = "ERROR_"
    var previousWasLowercase = false
    for character in String(describing: self) {
      if character.isUppercase && previousWasLowercase { name.append("_") }
      name.append(contentsOf: character.uppercased())
      previousWasLowercase = character.isLowercase
    }
    return name
  }
}
