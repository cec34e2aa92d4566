import Testing

@testable import AnonAuthWire

/// The Firebase column of the catalogue: every reason has an answer on the JSON API, and
/// the ones Firebase's SDKs act on keep Firebase's exact message.
@Suite struct ReasonCatalogueFirebaseTests {
  @Test func everyCataloguedReasonHasAFirebaseAnswer() {
    let missing = ReasonCatalogue.reasons.map(\.reason.name).filter {
      ReasonCatalogue.firebaseAnswers[$0] == nil
    }
    #expect(missing.isEmpty, "no Firebase answer for \(missing)")
    #expect(Set(ReasonCatalogue.firebaseAnswers.keys) == Set(ReasonCatalogue.reasons.map(\.reason.name)))
  }

  @Test func sdkMessagesAreFirebasesOwn() {
    let expected: [Reason: String] = [
      .emailExists: "EMAIL_EXISTS", .invalidIdToken: "INVALID_ID_TOKEN", .tokenExpired: "TOKEN_EXPIRED",
      .userNotFound: "USER_NOT_FOUND", .userDisabled: "USER_DISABLED", .weakPassword: "WEAK_PASSWORD",
      .invalidLoginCredentials: "INVALID_LOGIN_CREDENTIALS", .operationNotAllowed: "OPERATION_NOT_ALLOWED",
      .tooManyAttempts: "TOO_MANY_ATTEMPTS_TRY_LATER", .credentialTooOld: "CREDENTIAL_TOO_OLD_LOGIN_AGAIN",
      .credentialAlreadyInUse: "FEDERATED_USER_ID_ALREADY_LINKED",
    ]
    for (reason, message) in expected {
      #expect(ReasonCatalogue.firebaseAnswers[reason.name]?.message == message)
      #expect(ReasonCatalogue.firebaseAnswers[reason.name]?.httpStatus == 400)
    }
  }

  /// Only the reasons that mean "this session is over" carry the messages that make
  /// Firebase's SDKs sign the user out: their own, and an unknown refresh token (which
  /// never works again; Firebase's Apple SDK ignores INVALID_REFRESH_TOKEN).
  @Test func signOutMessagesComeOnlyFromTheirOwnReasons() {
    let signOut: Set<String> = ["INVALID_ID_TOKEN", "TOKEN_EXPIRED", "USER_NOT_FOUND", "USER_DISABLED"]
    let senders = ReasonCatalogue.firebaseAnswers.filter { signOut.contains($0.value.message) }.keys
    #expect(Set(senders) == signOut.union([Reason.invalidRefreshToken.name]))
    #expect(ReasonCatalogue.firebaseAnswers[Reason.invalidRefreshToken.name]?.message == "TOKEN_EXPIRED")
  }

  /// Every message is one Firebase's SDKs map to an error code of their own; the
  /// AnonAuth-only "last sign-in method" is the SDKs' OPERATION_NOT_ALLOWED.
  @Test func lastSignInMethodIsOperationNotAllowed() {
    let answer = ReasonCatalogue.firebaseAnswers[Reason.lastSignInMethod.name]
    #expect(answer?.message == "OPERATION_NOT_ALLOWED" && answer?.withDetail == true)
  }

  @Test func unknownReasonsFallBackToTheirStatusCode() {
    let answer = ReasonCatalogue.firebaseAnswer(forReason: "SOMETHING_NEW", code: .unavailable)
    #expect(answer.httpStatus == 503)
    #expect(answer.message == "SOMETHING_NEW")
  }
}
