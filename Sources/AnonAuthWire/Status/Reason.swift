/// A stable, machine-readable failure reason (docs/protocol.md §4; docs/reasons.md lists every one).
///
/// Each reason carries the one status code it is always sent with, so a handler names
/// the reason and the code can never disagree with the contract. The initializer is
/// internal to this module: a reason exists only as one of the statics below, and each of
/// those is described in `ReasonCatalogue`, from which docs/reasons.md is generated. A
/// reason invented elsewhere could not reach the page, so it cannot be made.
public struct Reason: Hashable, Sendable, CustomStringConvertible {
  public let name: String
  public let code: StatusCode

  init(_ name: String, _ code: StatusCode) {
    self.name = name
    self.code = code
  }

  public var description: String { name }

  public static let apiKeyInvalid = Reason("API_KEY_INVALID", .unauthenticated)
  public static let adminKeyInvalid = Reason("ADMIN_KEY_INVALID", .unauthenticated)
  public static let operationNotAllowed = Reason("OPERATION_NOT_ALLOWED", .failedPrecondition)
  public static let tooManyAttempts = Reason("TOO_MANY_ATTEMPTS_TRY_LATER", .resourceExhausted)
  public static let invalidIdToken = Reason("INVALID_ID_TOKEN", .unauthenticated)
  public static let tokenExpired = Reason("TOKEN_EXPIRED", .unauthenticated)
  public static let invalidRefreshToken = Reason("INVALID_REFRESH_TOKEN", .unauthenticated)
  public static let userNotFound = Reason("USER_NOT_FOUND", .notFound)
  public static let userDisabled = Reason("USER_DISABLED", .permissionDenied)
  public static let invalidEmail = Reason("INVALID_EMAIL", .invalidArgument)
  public static let weakPassword = Reason("WEAK_PASSWORD", .invalidArgument)
  public static let emailExists = Reason("EMAIL_EXISTS", .alreadyExists)
  public static let invalidLoginCredentials = Reason(
    "INVALID_LOGIN_CREDENTIALS", .unauthenticated)
  public static let credentialAlreadyInUse = Reason("CREDENTIAL_ALREADY_IN_USE", .alreadyExists)
  public static let providerAlreadyLinked = Reason(
    "PROVIDER_ALREADY_LINKED", .failedPrecondition)
  public static let invalidIdpResponse = Reason("INVALID_IDP_RESPONSE", .invalidArgument)
  /// An ID token with a `nonce` claim signed in without its raw nonce, with a raw nonce
  /// that does not match, or with a nonce that already signed in (Firebase's reason).
  public static let missingOrInvalidNonce = Reason("MISSING_OR_INVALID_NONCE", .invalidArgument)
  public static let noSuchProvider = Reason("NO_SUCH_PROVIDER", .failedPrecondition)
  public static let credentialTooOld = Reason(
    "CREDENTIAL_TOO_OLD_LOGIN_AGAIN", .failedPrecondition)
  /// Unlinking the only sign-in method a permanent account has left: the account could
  /// never be signed in to again (an addition to the contract; Firebase has no such rule).
  public static let lastSignInMethod = Reason("LAST_SIGN_IN_METHOD", .failedPrecondition)
  public static let forbiddenClaim = Reason("FORBIDDEN_CLAIM", .invalidArgument)
  public static let projectNotFound = Reason("PROJECT_NOT_FOUND", .notFound)
  public static let missingSignUpMethod = Reason("MISSING_SIGN_UP_METHOD", .invalidArgument)
  // Email actions (additions).
  /// An email action's code that is unknown, spent, of another kind, or no longer matches
  /// its account's email.
  public static let invalidOobCode = Reason("INVALID_OOB_CODE", .invalidArgument)
  /// An email action's code past its lifetime.
  public static let expiredOobCode = Reason("EXPIRED_OOB_CODE", .invalidArgument)
  /// An email action for an address with no account, when the project's email
  /// enumeration protection is off.
  public static let emailNotFound = Reason("EMAIL_NOT_FOUND", .notFound)
  /// A continue URL whose host is not one of the project's authorized domains.
  public static let unauthorizedDomain = Reason("UNAUTHORIZED_DOMAIN", .invalidArgument)
  /// A continue URL that is not an absolute http(s) URL, or missing where it is needed.
  public static let invalidContinueUri = Reason("INVALID_CONTINUE_URI", .invalidArgument)

  // Administration (AdminService only).
  /// A project setting out of range or not settable.
  public static let invalidConfig = Reason("INVALID_CONFIG", .invalidArgument)
  /// `CreateProject` for an id that exists.
  public static let projectExists = Reason("PROJECT_EXISTS", .alreadyExists)
  /// A request field out of range (for example a scheduled quota of 0).
  public static let invalidArgument = Reason("INVALID_ARGUMENT", .invalidArgument)
  /// An admin call without a client certificate when `--admin-requires-client-cert` is on.
  public static let clientCertificateRequired = Reason("CLIENT_CERTIFICATE_REQUIRED", .unauthenticated)
  /// `Backup` to a name the backups directory already holds.
  public static let backupExists = Reason("BACKUP_EXISTS", .alreadyExists)
  /// A cluster call to a daemon whose store is the single file.
  public static let notClustered = Reason("NOT_CLUSTERED", .failedPrecondition)
  /// `RemoveClusterNode` for an id the cluster does not have.
  public static let nodeNotFound = Reason("NODE_NOT_FOUND", .notFound)
  /// The dqlite leader refused a membership change.
  public static let clusterRefused = Reason("CLUSTER_REFUSED", .failedPrecondition)
  /// `CreateAccount` with a uid another account of the project has (an addition).
  public static let uidExists = Reason("UID_EXISTS", .alreadyExists)

  // Transport level.
  public static let malformedRequest = Reason("MALFORMED_REQUEST", .invalidArgument)
  public static let unknownMethod = Reason("UNKNOWN_METHOD", .unimplemented)
  public static let deadlineExceeded = Reason("DEADLINE_EXCEEDED", .deadlineExceeded)
  public static let tooManyCalls = Reason("TOO_MANY_CALLS", .resourceExhausted)
  public static let shuttingDown = Reason("SHUTTING_DOWN", .unavailable)
  public static let internalError = Reason("INTERNAL", .internalError)
  /// A write the store cannot take now (disk full, read-only file, I/O error): nothing
  /// changed, reads still work, and the same call can succeed once the store recovers.
  public static let storeUnavailable = Reason("STORE_UNAVAILABLE", .unavailable)
  /// Only the test-only `anonauth.test.TestService/Sleep` (`--test-hooks`) sends it.
  public static let cancelled = Reason("CANCELLED", .cancelled)
}
