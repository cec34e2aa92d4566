import AnonAuthWire

/// Why an `Auth` or `User` call failed, as typed cases (in the manner of FirebaseAuth's
/// `AuthErrorCode`), with the server's `RPCError` kept for anything else.
public enum AuthError: Error, Equatable, Sendable, CustomStringConvertible {
  case invalidAPIKey
  case operationNotAllowed
  case tooManyRequests(retryAfterSeconds: Int)
  case invalidUserToken
  case userTokenExpired
  case invalidRefreshToken
  case userNotFound
  case userDisabled
  case invalidEmail
  case weakPassword
  case emailAlreadyInUse
  case wrongPasswordOrUser
  case credentialAlreadyInUse(providerID: String, email: String)
  case providerAlreadyLinked
  case invalidCredential
  case noSuchProvider
  case requiresRecentLogin
  /// An email action's code that is unknown, used, replaced or no longer matches.
  case invalidActionCode
  /// An email action's code past its lifetime.
  case expiredActionCode
  /// No user is signed in.
  case noCurrentUser
  /// The daemon could not be reached or did not answer in time.
  case network(String)
  case server(RPCError)

  public init(_ error: RPCError) {
    switch error.reason {
    case Reason.apiKeyInvalid.name: self = .invalidAPIKey
    case Reason.operationNotAllowed.name: self = .operationNotAllowed
    case Reason.tooManyAttempts.name:
      self = .tooManyRequests(retryAfterSeconds: Int(error.details["retry_after_seconds"] ?? "") ?? 0)
    case Reason.invalidIdToken.name: self = .invalidUserToken
    case Reason.tokenExpired.name: self = .userTokenExpired
    case Reason.invalidRefreshToken.name: self = .invalidRefreshToken
    case Reason.userNotFound.name: self = .userNotFound
    case Reason.userDisabled.name: self = .userDisabled
    case Reason.invalidEmail.name: self = .invalidEmail
    case Reason.weakPassword.name: self = .weakPassword
    case Reason.emailExists.name: self = .emailAlreadyInUse
    case Reason.invalidLoginCredentials.name: self = .wrongPasswordOrUser
    case Reason.credentialAlreadyInUse.name:
      self = .credentialAlreadyInUse(
        providerID: error.details["provider_id"] ?? "", email: error.details["email"] ?? "")
    case Reason.providerAlreadyLinked.name: self = .providerAlreadyLinked
    case Reason.invalidIdpResponse.name: self = .invalidCredential
    case Reason.noSuchProvider.name: self = .noSuchProvider
    case Reason.credentialTooOld.name: self = .requiresRecentLogin
    case Reason.invalidOobCode.name: self = .invalidActionCode
    case Reason.expiredOobCode.name: self = .expiredActionCode
    default:
      if error.code == .unavailable || error.code == .deadlineExceeded {
        self = .network("\(error.code): \(error.message)")
      } else {
        self = .server(error)
      }
    }
  }

  /// A stable name for the case, for logs and the CLI.
  public var name: String {
    switch self {
    case .invalidAPIKey: "invalid-api-key"
    case .operationNotAllowed: "operation-not-allowed"
    case .tooManyRequests: "too-many-requests"
    case .invalidUserToken: "invalid-user-token"
    case .userTokenExpired: "user-token-expired"
    case .invalidRefreshToken: "invalid-refresh-token"
    case .userNotFound: "user-not-found"
    case .userDisabled: "user-disabled"
    case .invalidEmail: "invalid-email"
    case .weakPassword: "weak-password"
    case .emailAlreadyInUse: "email-already-in-use"
    case .wrongPasswordOrUser: "invalid-login-credentials"
    case .credentialAlreadyInUse: "credential-already-in-use"
    case .providerAlreadyLinked: "provider-already-linked"
    case .invalidCredential: "invalid-credential"
    case .noSuchProvider: "no-such-provider"
    case .requiresRecentLogin: "requires-recent-login"
    case .invalidActionCode: "invalid-action-code"
    case .expiredActionCode: "expired-action-code"
    case .noCurrentUser: "no-current-user"
    case .network: "network-error"
    case .server(let error): error.reason.isEmpty ? "\(error.code)" : error.reason
    }
  }

  public var description: String {
    switch self {
    case .server(let error): "\(error)"
    case .network(let why): "network-error: \(why)"
    case .tooManyRequests(let seconds): "too-many-requests: retry after \(seconds) s"
    case .credentialAlreadyInUse(let provider, _):
      "credential-already-in-use: this \(provider) identity belongs to another account"
    default: name
    }
  }
}
