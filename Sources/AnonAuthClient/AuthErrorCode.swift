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

  // FirebaseAuth's other codes, so that an app's `switch` over them still builds: no
  // AnonAuth call produces them (phone, multi-factor, web flows, reCAPTCHA, Game Center,
  // email actions, custom tokens).
  case invalidCustomToken = 17000
  case customTokenMismatch = 17002
  case appNotAuthorized = 17028
  case expiredActionCode = 17029
  case invalidActionCode = 17030
  case invalidMessagePayload = 17031
  case invalidSender = 17032
  case invalidRecipientEmail = 17033
  case missingIosBundleID = 17036
  case missingAndroidPackageName = 17037
  case unauthorizedDomain = 17038
  case invalidContinueURI = 17039
  case missingContinueURI = 17040
  case missingPhoneNumber = 17041
  case invalidPhoneNumber = 17042
  case missingVerificationCode = 17043
  case invalidVerificationCode = 17044
  case missingVerificationID = 17045
  case invalidVerificationID = 17046
  case missingAppCredential = 17047
  case invalidAppCredential = 17048
  case sessionExpired = 17051
  case quotaExceeded = 17052
  case missingAppToken = 17053
  case notificationNotForwarded = 17054
  case appNotVerified = 17055
  case captchaCheckFailed = 17056
  case webContextAlreadyPresented = 17057
  case webContextCancelled = 17058
  case appVerificationUserInteractionFailure = 17059
  case invalidClientID = 17060
  case webNetworkRequestFailed = 17061
  case webInternalError = 17062
  case webSignInUserInteractionFailure = 17063
  case localPlayerNotAuthenticated = 17066
  case invalidProviderID = 17071
  case tenantIDMismatch = 17072
  case unsupportedTenantOperation = 17073
  case invalidHostingLinkDomain = 17214
  case rejectedCredential = 17075
  case gameKitNotLinked = 17076
  case secondFactorRequired = 17078
  case missingMultiFactorSession = 17081
  case missingMultiFactorInfo = 17082
  case invalidMultiFactorSession = 17083
  case multiFactorInfoNotFound = 17084
  case adminRestrictedOperation = 17085
  case unverifiedEmail = 17086
  case secondFactorAlreadyEnrolled = 17087
  case maximumSecondFactorCountExceeded = 17088
  case unsupportedFirstFactor = 17089
  case emailChangeNeedsVerification = 17090
  case missingClientIdentifier = 17093
  case missingOrInvalidNonce = 17094
  case blockingCloudFunctionError = 17105
  case recaptchaNotEnabled = 17200
  case missingRecaptchaToken = 17201
  case invalidRecaptchaToken = 17202
  case invalidRecaptchaAction = 17203
  case missingClientType = 17204
  case missingRecaptchaVersion = 17205
  case invalidRecaptchaVersion = 17206
  case invalidReqType = 17207
  case recaptchaSDKNotLinked = 17208
  case recaptchaSiteKeyMissing = 17209
  case recaptchaActionCreationFailed = 17210
  case passwordDoesNotMeetRequirements = 17211

  /// Firebase's short name of the code (`ERROR_EMAIL_ALREADY_IN_USE`), under
  /// `AuthErrors.userInfoNameKey`.
  public var name: String {
    switch self {
    case .networkError: return "ERROR_NETWORK_REQUEST_FAILED"
    case .missingAndroidPackageName: return "ERROR_MISSING_ANDROID_PKG_NAME"
    case .appVerificationUserInteractionFailure: return "ERROR_APP_VERIFICATION_FAILED"
    case .webSignInUserInteractionFailure: return "ERROR_WEB_USER_INTERACTION_FAILURE"
    case .blockingCloudFunctionError: return "ERROR_BLOCKING_CLOUD_FUNCTION_RETURNED_ERROR"
    default: break
    }
    // The case name in upper snake case: a word starts at an uppercase letter after a
    // lowercase one, or at the last capital of an acronym (`invalidAPIKey`: API_KEY).
    let letters = Array(String(describing: self))
    var name = "ERROR_"
    for (index, letter) in letters.enumerated() {
      if index > 0 && letter.isUppercase {
        let previous = letters[index - 1]
        let next = index + 1 < letters.count ? letters[index + 1] : "A"
        if previous.isLowercase || (previous.isUppercase && next.isLowercase) { name.append("_") }
      }
      name.append(contentsOf: letter.uppercased())
    }
    return name
  }
}
