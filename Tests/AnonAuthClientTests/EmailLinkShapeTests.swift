import Foundation
import Testing

@testable import AnonAuthClient

/// The email actions as the client sends them: Firebase's `accounts:sendOobCode` with the
/// action-code settings, `signInWithEmailLink` with the link's code (and the ID token to
/// link an anonymous user, whose uid stays), `resetPassword` to check a code.
@Suite struct EmailLinkShapeTests {
  static let link =
    "https://app.example.com/action?mode=signIn&oobCode=CODE-1_x&apiKey=test-key&continueUrl=http%3A%2F%2Flocalhost%2Ff&lang=en"

  @Test func aSignInLinkIsRecognizedAlsoWhenWrapped() {
    let auth = StubServer().auth()
    #expect(auth.isSignIn(withEmailLink: Self.link))
    let wrapped =
      "https://app.page.link/?link="
      + (Self.link.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")
    #expect(auth.isSignIn(withEmailLink: wrapped))
    #expect(!auth.isSignIn(withEmailLink: "https://app.example.com/action?mode=resetPassword&oobCode=C"))
    #expect(!auth.isSignIn(withEmailLink: "https://app.example.com/action?mode=signIn"))
  }

  @Test func sendSignInLinkCarriesTheSettings() async throws {
    let stub = StubServer()
    stub.on(
      "accounts:sendOobCode",
      #"{"kind":"identitytoolkit#GetOobConfirmationCodeResponse","email":"a@example.com"}"#)
    let settings = ActionCodeSettings()
    settings.url = URL(string: "http://localhost/finish")
    settings.handleCodeInApp = true
    settings.setIOSBundleID("com.example.app")
    try await stub.auth().sendSignInLink(toEmail: "a@example.com", actionCodeSettings: settings)
    let body = stub.seen[0].json
    #expect(body["requestType"] as? String == "EMAIL_SIGNIN")
    #expect(body["email"] as? String == "a@example.com")
    #expect(body["continueUrl"] as? String == "http://localhost/finish")
    #expect(body["canHandleCodeInApp"] as? Bool == true)
    #expect(body["iOSBundleId"] as? String == "com.example.app")
  }

  @Test func anAnonymousUserLinksAnEmailLinkAndKeepsItsUID() async throws {
    let stub = StubServer.anonymousU1()
    stub.on(
      "accounts:signInWithEmailLink", StubServer.signIn(uid: "u1", idToken: "id-2", refreshToken: "refresh-2")
    )
    stub.on("accounts:lookup", StubServer.lookup(uid: "u1", email: "a@example.com", providers: ["password"]))
    let auth = stub.auth()
    let user = try await auth.signInAnonymously().user
    let linked = try await user.link(
      with: EmailAuthProvider.credential(withEmail: "a@example.com", link: Self.link))
    let body = stub.seen[2].json
    #expect(stub.seen[2].path == "/v1/accounts:signInWithEmailLink")
    #expect(body["oobCode"] as? String == "CODE-1_x")
    #expect(body["email"] as? String == "a@example.com")
    #expect(body["idToken"] as? String == "id-1")
    #expect(linked.user === user && user.uid == "u1" && !user.isAnonymous)
  }

  @Test func checkActionCodeReadsTheKindAndAddresses() async throws {
    let stub = StubServer()
    stub.on(
      "accounts:resetPassword",
      #"{"kind":"identitytoolkit#ResetPasswordResponse","email":"old@example.com","newEmail":"new@example.com","requestType":"VERIFY_AND_CHANGE_EMAIL"}"#
    )
    let info = try await stub.auth().checkActionCode("C")
    #expect(
      info
        == ActionCodeInfo(
          operation: .verifyAndChangeEmail, email: "new@example.com", previousEmail: "old@example.com"))
    #expect(stub.seen[0].json["newPassword"] == nil && stub.seen[0].json["oobCode"] as? String == "C")
  }

  @Test func codeErrorsMapToFirebaseAuthsCodes() {
    #expect(AuthError.serverCodes["INVALID_OOB_CODE"] == .invalidActionCode)
    #expect(AuthError.serverCodes["EXPIRED_OOB_CODE"] == .expiredActionCode)
    #expect(AuthError.serverCodes["UNAUTHORIZED_DOMAIN"] == .unauthorizedDomain)
  }
}
