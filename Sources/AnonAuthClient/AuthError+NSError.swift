import Foundation

/// `(error as NSError)` reads as FirebaseAuth's errors do, so code written as
/// `AuthErrorCode(rawValue: (error as NSError).code)` or against `userInfo` ports as is.
extension AuthError: CustomNSError, LocalizedError {
  public static var errorDomain: String { AuthErrors.domain }

  public var errorCode: Int { code.rawValue }

  public var errorUserInfo: [String: Any] {
    var info: [String: Any] = [
      NSLocalizedDescriptionKey: code.explanation,
      AuthErrors.userInfoNameKey: code.name,
    ]
    if !message.isEmpty { info[NSLocalizedFailureReasonErrorKey] = message }
    if let email { info[AuthErrors.userInfoEmailKey] = email }
    if let updatedCredential { info[AuthErrors.userInfoUpdatedCredentialKey] = updatedCredential }
    return info
  }

  public var errorDescription: String? { code.explanation }

  public var failureReason: String? { message.isEmpty ? nil : message }
}

extension AuthErrorCode {
  /// A sentence for `localizedDescription`, in this library's own words.
  var explanation: String {
    switch self {
    case .invalidCredential: "The credential is wrong, malformed or has expired."
    case .userDisabled: "This account has been disabled."
    case .operationNotAllowed: "This way of signing in is not enabled for the project."
    case .emailAlreadyInUse: "Another account already uses this email address."
    case .invalidEmail: "The email address is not valid."
    case .wrongPassword: "The password is wrong."
    case .tooManyRequests: "Too many requests from this device; try again later."
    case .userNotFound: "There is no account for this user; it may have been deleted."
    case .accountExistsWithDifferentCredential: "An account with this email uses another way of signing in."
    case .requiresRecentLogin: "This change needs a recent sign-in; sign in again first."
    case .providerAlreadyLinked: "This provider is already linked to the user."
    case .noSuchProvider: "This provider is not linked to the user."
    case .invalidUserToken: "The session is no longer valid; sign in again."
    case .networkError: "The server could not be reached, or its answer was not understood."
    case .userTokenExpired: "The session has ended; sign in again."
    case .invalidAPIKey: "The API key is not valid."
    case .userMismatch: "The credential belongs to another user than this one."
    case .credentialAlreadyInUse: "This credential is already linked to another account."
    case .weakPassword: "The password is too weak."
    case .missingEmail: "An email address is needed."
    case .nullUser: "No user is signed in for this operation."
    case .keychainError: "The session could not be read or kept by the device's store."
    case .internalError: "The server could not do this; see the failure reason."
    case .malformedJWT: "The token is not a well-formed JWT."
    default: "AnonAuth does not offer this (\(name))."
    }
  }
}
