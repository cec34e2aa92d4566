import Foundation
import Testing

@testable import AnonAuthClient

/// Code written for FirebaseAuth reads the same: `Auth.auth()` after `configure`, and
/// errors read through `NSError` as Firebase's are.
@Suite struct SeedShapeTests {
  @Test func callersSwitchOnTheCode() async {
    let stub = StubServer()
    stub.on("accounts:signUp", status: 400, StubServer.error("EMAIL_EXISTS"))
    let auth = stub.auth()
    var caught = ""
    do {
      _ = try await auth.createUser(withEmail: "a@example.com", password: "pw123456")
    } catch {
      switch AuthErrorCode(rawValue: (error as NSError).code) {
      case .weakPassword: caught = "weak"
      case .emailAlreadyInUse: caught = "in use"
      default: caught = "other"
      }
    }
    #expect(caught == "in use")
  }

  @Test func authBeforeConfigureFailsEveryCallSayingSo() async {
    // Nothing in this test bundle calls `configure`.
    let auth = Auth.auth()
    #expect(auth.currentUser == nil)
    let error = await #expect(throws: AuthError.self) { try await auth.signInAnonymously() }
    #expect(error?.code == .internalError)
    #expect(error?.message.contains("Auth.configure") == true)
  }
}
