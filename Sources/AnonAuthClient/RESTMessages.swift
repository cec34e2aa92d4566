/// The JSON bodies of Firebase's Identity Toolkit v1 and Secure Token APIs, as AnonAuth
/// serves them, with Firebase's field names. Only the fields this client sends or reads.

/// `accounts:signUp`: anonymous (no email), email and password, or with `idToken`, a link
/// of email and password to that user.
struct SignUpBody: Encodable {
  var email: String?
  var password: String?
  var idToken: String?
  var returnSecureToken = true
}

/// `accounts:signInWithPassword`.
struct SignInWithPasswordBody: Encodable {
  var email: String
  var password: String
  var returnSecureToken = true
}

/// `accounts:signInWithIdp`; with `idToken`, a link to that user.
struct SignInWithIdpBody: Encodable {
  var postBody: String
  var requestUri = "http://localhost"
  var idToken: String?
  var returnSecureToken = true
  var returnIdpCredential = true
}

/// `accounts:update`: `deleteProvider` unlinks.
/// `password` changes it, `displayName` and `photoUrl` the profile
/// (`deleteAttribute` `DISPLAY_NAME` / `PHOTO_URL` clears them).
struct UpdateBody: Encodable {
  var idToken: String
  var deleteProvider: [String]?
  var password: String?
  var displayName: String?
  var photoUrl: String?
  var deleteAttribute: [String]?
  var returnSecureToken = true
}

/// `accounts:sendOobCode`: an email action's mail, with FirebaseAuth's action-code
/// settings.
struct OobCodeBody: Encodable {
  var requestType: String
  var email: String?
  var idToken: String?
  var newEmail: String?
  var continueUrl: String?
  var canHandleCodeInApp: Bool?
  var iOSBundleId: String?
  var androidPackageName: String?

  init(
    requestType: String, email: String? = nil, idToken: String? = nil, newEmail: String? = nil,
    settings: ActionCodeSettings? = nil
  ) {
    self.requestType = requestType
    self.email = email
    self.idToken = idToken
    self.newEmail = newEmail
    continueUrl = settings?.url?.absoluteString
    canHandleCodeInApp = settings.map(\.handleCodeInApp)
    iOSBundleId = settings?.iOSBundleID
    androidPackageName = settings?.androidPackageName
  }
}

/// `accounts:signInWithEmailLink`, with `idToken` to link.
struct EmailLinkBody: Encodable {
  var email: String
  var oobCode: String
  var idToken: String?
  var returnSecureToken = true
}

/// What `accounts:resetPassword` answers about a code.
struct ActionCodeReply: Decodable {
  var email: String?
  var newEmail: String?
  var requestType: String?
}

/// `accounts:signInWithFirebaseIdToken` (AnonAuth's): a Firebase ID token to exchange.
struct FirebaseIDTokenBody: Encodable {
  var idToken: String
  var returnSecureToken = true
}

/// `accounts:lookup` and `accounts:delete`.
struct IDTokenBody: Encodable {
  var idToken: String
}

/// What sign-ups, sign-ins and links answer. `expiresIn` is a string of seconds.
struct SignInReply: Decodable {
  var idToken: String?
  var refreshToken: String?
  var expiresIn: String?
  var localId: String?
  var isNewUser: Bool?
  var email: String?
  var providerId: String?
  /// `signInWithIdp` answers 200 with this when the identity belongs to another user.
  var errorMessage: String?
  /// With `errorMessage`: the provider's token, to sign in to that user instead.
  var oauthIdToken: String?
  var oauthAccessToken: String?
  /// The provider's profile of the user, a JSON object as a string.
  var rawUserInfo: String?
  var screenName: String?
}

/// What `accounts:update` answers; tokens only when the change rotated them.
struct UpdateReply: Decodable {
  var idToken: String?
  var refreshToken: String?
  var expiresIn: String?
}

/// `accounts:lookup`'s answer: exactly one user for an ID token.
struct LookupReply: Decodable {
  var users: [AccountRecord]?
}

struct AccountRecord: Decodable {
  var localId: String
  var email: String?
  var displayName: String?
  var emailVerified: Bool?
  var disabled: Bool?
  var photoUrl: String?
  var phoneNumber: String?
  /// Strings of epoch milliseconds.
  var createdAt: String?
  var lastLoginAt: String?
  var providerUserInfo: [ProviderRecord]?
}

struct ProviderRecord: Decodable {
  var providerId: String
  var rawId: String?
  var federatedId: String?
  var email: String?
  var displayName: String?
  var photoUrl: String?
  var phoneNumber: String?
}

/// The token endpoint's answer (snake case, as Firebase's).
struct TokenReply: Decodable {
  var idToken: String?
  var accessToken: String?
  var refreshToken: String?
  var expiresIn: String?
  var userId: String?

  enum CodingKeys: String, CodingKey {
    case idToken = "id_token"
    case accessToken = "access_token"
    case refreshToken = "refresh_token"
    case expiresIn = "expires_in"
    case userId = "user_id"
  }
}

/// Firebase's error body: `{"error":{"code":400,"message":"EMAIL_EXISTS"}}`.
struct ErrorReply: Decodable {
  struct Body: Decodable {
    var code: Int?
    var message: String
  }
  var error: Body
}

/// The empty answer of `accounts:delete`.
struct EmptyReply: Decodable {}

/// `accounts:resetPassword`: without `newPassword` it only checks the code.
struct ResetPasswordBody: Encodable {
  var oobCode: String
  var newPassword: String?
}

/// `accounts:update` with the code of an email-verification email.
struct ActionCodeBody: Encodable {
  var oobCode: String
}

/// `accounts:signInWithCustomToken`.
struct CustomTokenBody: Encodable {
  var token: String
  var returnSecureToken = true
}
