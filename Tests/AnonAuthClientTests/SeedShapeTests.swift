import Foundation
import Testing

@testable import AnonAuthClient

/// Code written for FirebaseAuth reads the same: `Auth.auth()` after `configure`, and
/// `catch where error.code == ...` on the typed error.
@Suite struct SeedShapeTests {
  @Test func callersSwitchOnTheCode() async {
    let stub = StubServer()
    stub.on("accounts:signUp", status: 400, StubServer.error("EMAIL_EXISTS"))
    let auth = stub.auth()
    var caught = ""
    do {
      _ = try await auth.createUser(withEmail: "a@example.com", password: "pw123456")
    } catch  where error.code == .weakPassword {
      caught = "weak"
    } catch  where error.code == .emailAlreadyInUse {
      caught = "in use"
    } catch {
      caught = "other"
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
