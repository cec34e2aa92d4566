/// How each reason is answered on Firebase's JSON API (docs/http-api.md): the HTTP status
/// and the `error.message` Firebase's SDKs branch on. Data beside the catalogue, so
/// docs/reasons.md shows the column and a test holds every reason to an entry.
///
/// Firebase's client SDKs sign the user out on INVALID_ID_TOKEN, TOKEN_EXPIRED,
/// USER_NOT_FOUND and USER_DISABLED: only the reasons that mean exactly that map to them.
public struct FirebaseAnswer: Sendable, Equatable {
  /// The HTTP status of the error reply.
  public let httpStatus: Int
  /// Firebase's message: an upper-case code, or Google's own text for key errors.
  public let message: String
  /// Whether the message carries " : " and the native message after it, as Firebase's do
  /// for a few codes (`WEAK_PASSWORD : Password should be at least 6 characters`). SDKs
  /// read the part before the colon.
  public let withDetail: Bool

  init(_ httpStatus: Int, _ message: String, withDetail: Bool = false) {
    self.httpStatus = httpStatus
    self.message = message
    self.withDetail = withDetail
  }
}

extension ReasonCatalogue {
  /// The answer for the reason named `name`; a reason this build does not know (sent by a
  /// newer peer) is answered by its status code's HTTP equivalent.
  public static func firebaseAnswer(forReason name: String, code: StatusCode) -> FirebaseAnswer {
    firebaseAnswers[name] ?? FirebaseAnswer(httpStatus(for: code), name.isEmpty ? "\(code)" : name)
  }

  /// Google's mapping of canonical codes to HTTP statuses.
  public static func httpStatus(for code: StatusCode) -> Int {
    switch code {
    case .invalidArgument, .failedPrecondition, .outOfRange: return 400
    case .unauthenticated: return 401
    case .permissionDenied: return 403
    case .notFound: return 404
    case .alreadyExists, .aborted: return 409
    case .resourceExhausted: return 429
    case .cancelled: return 499
    case .unimplemented: return 501
    case .unavailable: return 503
    case .deadlineExceeded: return 504
    default: return 500
    }
  }

  /// Every reason's answer, by reason name.
  public static let firebaseAnswers: [String: FirebaseAnswer] = {
    let answers: [(Reason, FirebaseAnswer)] = [
      (.apiKeyInvalid, FirebaseAnswer(400, "API key not valid. Please pass a valid API key.")),
      (.operationNotAllowed, FirebaseAnswer(400, "OPERATION_NOT_ALLOWED")),
      (.tooManyAttempts, FirebaseAnswer(400, "TOO_MANY_ATTEMPTS_TRY_LATER", withDetail: true)),
      (.invalidIdToken, FirebaseAnswer(400, "INVALID_ID_TOKEN")),
      (.tokenExpired, FirebaseAnswer(400, "TOKEN_EXPIRED")),
      // Firebase says INVALID_REFRESH_TOKEN for a token it never issued and TOKEN_EXPIRED
      // for a revoked one; its Apple SDK signs out only on the second. AnonAuth deletes
      // revoked, reused and evicted sessions, so it cannot tell them apart, and a refresh
      // token it does not know never works again: TOKEN_EXPIRED, so that the SDK signs out.
      (.invalidRefreshToken, FirebaseAnswer(400, "TOKEN_EXPIRED")),
      (.userNotFound, FirebaseAnswer(400, "USER_NOT_FOUND")),
      (.userDisabled, FirebaseAnswer(400, "USER_DISABLED")),
      (.invalidEmail, FirebaseAnswer(400, "INVALID_EMAIL")),
      (.weakPassword, FirebaseAnswer(400, "WEAK_PASSWORD", withDetail: true)),
      (.emailExists, FirebaseAnswer(400, "EMAIL_EXISTS")),
      (.invalidLoginCredentials, FirebaseAnswer(400, "INVALID_LOGIN_CREDENTIALS")),
      (.credentialAlreadyInUse, FirebaseAnswer(400, "FEDERATED_USER_ID_ALREADY_LINKED")),
      (.providerAlreadyLinked, FirebaseAnswer(400, "PROVIDER_ALREADY_LINKED")),
      (.invalidIdpResponse, FirebaseAnswer(400, "INVALID_IDP_RESPONSE", withDetail: true)),
      (.missingOrInvalidNonce, FirebaseAnswer(400, "MISSING_OR_INVALID_NONCE", withDetail: true)),
      (.noSuchProvider, FirebaseAnswer(400, "NO_SUCH_PROVIDER")),
      (.credentialTooOld, FirebaseAnswer(400, "CREDENTIAL_TOO_OLD_LOGIN_AGAIN")),
      // No Firebase message means "the last way in": the SDKs know OPERATION_NOT_ALLOWED.
      (.lastSignInMethod, FirebaseAnswer(400, "OPERATION_NOT_ALLOWED", withDetail: true)),
      (.forbiddenClaim, FirebaseAnswer(400, "FORBIDDEN_CLAIM", withDetail: true)),
      (.projectNotFound, FirebaseAnswer(400, "PROJECT_NOT_FOUND")),
      (.missingSignUpMethod, FirebaseAnswer(400, "MISSING_SIGN_UP_METHOD")),
      (.invalidOobCode, FirebaseAnswer(400, "INVALID_OOB_CODE")),
      (.expiredOobCode, FirebaseAnswer(400, "EXPIRED_OOB_CODE")),
      (.emailNotFound, FirebaseAnswer(400, "EMAIL_NOT_FOUND")),
      (.unauthorizedDomain, FirebaseAnswer(400, "UNAUTHORIZED_DOMAIN", withDetail: true)),
      (.invalidContinueUri, FirebaseAnswer(400, "INVALID_CONTINUE_URI", withDetail: true)),
      (.invalidConfig, FirebaseAnswer(400, "INVALID_CONFIG", withDetail: true)),
      (.projectExists, FirebaseAnswer(400, "PROJECT_EXISTS")),
      (.invalidArgument, FirebaseAnswer(400, "INVALID_ARGUMENT", withDetail: true)),
      (.adminKeyInvalid, FirebaseAnswer(401, "UNAUTHENTICATED")),
      (.clientCertificateRequired, FirebaseAnswer(401, "CLIENT_CERTIFICATE_REQUIRED")),
      (.backupExists, FirebaseAnswer(400, "BACKUP_EXISTS")),
      (.uidExists, FirebaseAnswer(400, "DUPLICATE_LOCAL_ID")),
      (.notClustered, FirebaseAnswer(400, "NOT_CLUSTERED")),
      (.nodeNotFound, FirebaseAnswer(400, "NODE_NOT_FOUND")),
      (.clusterRefused, FirebaseAnswer(400, "CLUSTER_REFUSED", withDetail: true)),
      (.malformedRequest, FirebaseAnswer(400, "INVALID_ARGUMENT", withDetail: true)),
      (.unknownMethod, FirebaseAnswer(404, "NOT_FOUND")),
      (.deadlineExceeded, FirebaseAnswer(504, "DEADLINE_EXCEEDED")),
      (.tooManyCalls, FirebaseAnswer(429, "TOO_MANY_ATTEMPTS_TRY_LATER", withDetail: true)),
      (.shuttingDown, FirebaseAnswer(503, "UNAVAILABLE")),
      (.internalError, FirebaseAnswer(500, "INTERNAL_ERROR")),
      (.storeUnavailable, FirebaseAnswer(503, "UNAVAILABLE")),
      (.cancelled, FirebaseAnswer(499, "CANCELLED")),
    ]
    return Dictionary(answers.map { ($0.0.name, $0.1) }, uniquingKeysWith: { first, _ in first })
  }()
}
