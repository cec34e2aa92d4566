import Foundation

/// The error of every `Auth` and `User` call: a code to switch on, and the server's own
/// message (`"WEAK_PASSWORD : Password should be at least 6 characters"`) for logs. It
/// bridges to the `NSError` FirebaseAuth throws: domain `FIRAuthErrorDomain`, code the
/// `AuthErrorCode`'s raw value, and `userInfo` with a description, the code's name, and
/// (after `.credentialAlreadyInUse`) the credential to sign in with instead.
public struct AuthError: Error, Sendable, Equatable, CustomStringConvertible {
  public let code: AuthErrorCode
  /// The server's `error.message` as it came, or a local explanation.
  public let message: String
  /// With `.credentialAlreadyInUse`: a credential that signs in to the account which
  /// owns the identity, when the server returned one.
  public let updatedCredential: AuthCredential?
  /// With `.emailAlreadyInUse` and `.credentialAlreadyInUse`: the email concerned, when
  /// known.
  public let email: String?

  public init(
    _ code: AuthErrorCode, message: String = "", updatedCredential: AuthCredential? = nil,
    email: String? = nil
  ) {
    self.code = code
    self.message = message
    self.updatedCredential = updatedCredential
    self.email = email
  }

  /// The code of a Firebase error message: the part before " : " when it carries a
  /// detail, as Firebase's SDKs read it.
  static func code(ofServerMessage message: String) -> AuthErrorCode {
    let head = message.split(separator: ":", maxSplits: 1).first.map(String.init) ?? message
    return serverCodes[head.trimmingCharacters(in: .whitespaces)] ?? .internalError
  }

  /// Firebase's error messages (which AnonAuth's HTTP API answers with) and their codes.
  static let serverCodes: [String: AuthErrorCode] = [
    // Google's own words for a bad key (no code before them), which AnonAuth answers too.
    "API key not valid. Please pass a valid API key.": .invalidAPIKey,
    "API_KEY_INVALID": .invalidAPIKey,
    "INVALID_API_KEY": .invalidAPIKey,
    "OPERATION_NOT_ALLOWED": .operationNotAllowed,
    "ADMIN_ONLY_OPERATION": .operationNotAllowed,
    "PROJECT_NOT_FOUND": .invalidAPIKey,
    "TOO_MANY_ATTEMPTS_TRY_LATER": .tooManyRequests,
    "QUOTA_EXCEEDED": .tooManyRequests,
    "RESOURCE_EXHAUSTED": .tooManyRequests,
    "INVALID_ID_TOKEN": .invalidUserToken,
    "MISSING_ID_TOKEN": .invalidUserToken,
    "USER_MISMATCH": .invalidUserToken,
    "INVALID_REFRESH_TOKEN": .invalidUserToken,
    "MISSING_REFRESH_TOKEN": .invalidUserToken,
    "TOKEN_EXPIRED": .userTokenExpired,
    "USER_NOT_FOUND": .userNotFound,
    "EMAIL_NOT_FOUND": .userNotFound,
    "USER_DISABLED": .userDisabled,
    "INVALID_EMAIL": .invalidEmail,
    "MISSING_EMAIL": .invalidEmail,
    "WEAK_PASSWORD": .weakPassword,
    "MISSING_PASSWORD": .weakPassword,
    "EMAIL_EXISTS": .emailAlreadyInUse,
    "INVALID_PASSWORD": .wrongPassword,
    "INVALID_LOGIN_CREDENTIALS": .invalidCredential,
    "INVALID_IDP_RESPONSE": .invalidCredential,
    "MISSING_OR_INVALID_NONCE": .missingOrInvalidNonce,
    "INVALID_CREDENTIAL": .invalidCredential,
    "FEDERATED_USER_ID_ALREADY_LINKED": .credentialAlreadyInUse,
    "CREDENTIAL_ALREADY_IN_USE": .credentialAlreadyInUse,
    "PROVIDER_ALREADY_LINKED": .providerAlreadyLinked,
    "NO_SUCH_PROVIDER": .noSuchProvider,
    "CREDENTIAL_TOO_OLD_LOGIN_AGAIN": .requiresRecentLogin,
    "INVALID_OOB_CODE": .invalidActionCode,
    "EXPIRED_OOB_CODE": .expiredActionCode,
    "UNAUTHORIZED_DOMAIN": .unauthorizedDomain,
    "INVALID_CONTINUE_URI": .invalidContinueURI,
    "MISSING_CONTINUE_URI": .missingContinueURI,
    "RESET_PASSWORD_EXCEED_LIMIT": .tooManyRequests,
    // The server is shutting down, its store is unreachable or the call ran out of time:
    // worth trying again, like a lost connection.
    "UNAVAILABLE": .networkError,
    "DEADLINE_EXCEEDED": .networkError,
  ]

  /// The codes after which the session is dead on the server, so the user is signed out
  /// locally, as Firebase's SDKs do.
  var endsSession: Bool {
    switch code {
    case .invalidUserToken, .userTokenExpired, .userNotFound, .userDisabled: true
    default: false
    }
  }

  public var description: String {
    message.isEmpty ? "AuthError.\(code)" : "AuthError.\(code): \(message)"
  }
}
