import Foundation
import Testing

@testable import AnonAuthClient

/// Firebase's error bodies become `AuthErrorCode`s; answers that are not Firebase's JSON
/// are network errors.
@Suite struct ErrorMappingTests {
  @Test(arguments: [
    ("EMAIL_EXISTS", AuthErrorCode.emailAlreadyInUse),
    ("WEAK_PASSWORD : Password should be at least 6 characters", .weakPassword),
    ("INVALID_LOGIN_CREDENTIALS", .invalidCredential),
    ("INVALID_PASSWORD", .wrongPassword),
    ("EMAIL_NOT_FOUND", .userNotFound),
    ("USER_DISABLED", .userDisabled),
    ("INVALID_EMAIL", .invalidEmail),
    ("OPERATION_NOT_ALLOWED", .operationNotAllowed),
    ("TOO_MANY_ATTEMPTS_TRY_LATER : Too many attempts", .tooManyRequests),
    ("INVALID_IDP_RESPONSE : the token does not verify", .invalidCredential),
    ("CREDENTIAL_TOO_OLD_LOGIN_AGAIN", .requiresRecentLogin),
    ("PROVIDER_ALREADY_LINKED", .providerAlreadyLinked),
    ("API key not valid. Please pass a valid API key.", .invalidAPIKey),
    ("UNAVAILABLE", .networkError),
    ("SOMETHING_NEW", .internalError),
  ])
  func serverMessagesMapToCodes(message: String, code: AuthErrorCode) async {
    let stub = StubServer()
    stub.on("accounts:signInWithPassword", status: 400, StubServer.error(message))
    let auth = stub.auth()
    let error = await #expect(throws: AuthError.self) {
      try await auth.signIn(withEmail: "a@example.com", password: "pw")
    }
    #expect(error?.code == code)
    #expect(error?.message == message)
  }

  @Test func anAnswerWithoutFirebasesErrorBodyIsANetworkError() async {
    let stub = StubServer()
    stub.on("accounts:signUp", status: 502, "<html>bad gateway</html>")
    stub.on("accounts:signUp", status: 500, "")
    stub.on("accounts:signUp", status: 0, "")
    let auth = stub.auth()
    for _ in 0..<3 {
      let error = await #expect(throws: AuthError.self) { try await auth.signInAnonymously() }
      #expect(error?.code == .networkError)
    }
  }

  @Test func anIdentityLinkedToAnotherUserCarriesTheCredentialToSignInWith() async throws {
    let stub = StubServer.anonymousU1()
    stub.on(
      "accounts:signInWithIdp",
      #"{"errorMessage":"FEDERATED_USER_ID_ALREADY_LINKED","providerId":"google.com","oauthIdToken":"g-token"}"#
    )
    let auth = stub.auth()
    let user = try await auth.signInAnonymously().user
    let error = await #expect(throws: AuthError.self) {
      try await user.link(with: GoogleAuthProvider.credential(withIDToken: "g-token", accessToken: ""))
    }
    #expect(error?.code == .credentialAlreadyInUse)
    #expect(
      error?.updatedCredential == GoogleAuthProvider.credential(withIDToken: "g-token", accessToken: ""))
    #expect(auth.currentUser?.uid == "u1")
  }

  @Test func aLinkRefusedForItsEmailKeepsTheUserSignedIn() async throws {
    let stub = StubServer.anonymousU1()
    stub.on("accounts:signUp", status: 400, StubServer.error("EMAIL_EXISTS"))
    let auth = stub.auth()
    let user = try await auth.signInAnonymously().user
    let error = await #expect(throws: AuthError.self) {
      try await user.link(
        with: EmailAuthProvider.credential(withEmail: "taken@example.com", password: "pw123456"))
    }
    #expect(error?.code == .emailAlreadyInUse)
    #expect(auth.currentUser?.uid == "u1")
  }

  @Test(arguments: ["INVALID_ID_TOKEN", "TOKEN_EXPIRED", "USER_NOT_FOUND", "USER_DISABLED"])
  func anAnswerThatEndsTheSessionSignsOut(message: String) async throws {
    let stub = StubServer.anonymousU1()
    stub.on("accounts:lookup", status: 400, StubServer.error(message))
    let auth = stub.auth()
    let user = try await auth.signInAnonymously().user
    let error = await #expect(throws: AuthError.self) { try await user.reload() }
    #expect(error?.message == message)
    #expect(auth.currentUser == nil)
  }
}
