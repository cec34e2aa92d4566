import Foundation
import Synchronization
import Testing

@testable import AnonAuthClient

/// `signIn(withFirebaseIDToken:)`: posts the Firebase ID token to AnonAuth's
/// `accounts:signInWithFirebaseIdToken`, and the answer becomes the persisted session
/// that listeners hear about.
@Suite struct FirebaseExchangeClientTests {
  @Test func theExchangeSignsInPersistsAndNotifies() async throws {
    let stub = StubServer()
    stub.on(
      "accounts:signInWithFirebaseIdToken",
      #"{"idToken":"id-9","refreshToken":"refresh-9","expiresIn":"3600","localId":"fb-1","#
        + #""isNewUser":false,"providerId":"password","email":"a@example.com"}"#)
    stub.on(
      "accounts:lookup", StubServer.lookup(uid: "fb-1", email: "a@example.com", providers: ["password"]))
    let store = MemorySessionStore()
    let auth = stub.auth(store: store)
    let heard = Mutex<[String]>([])
    let handle = auth.addStateDidChangeListener { _, user in heard.withLock { $0.append(user?.uid ?? "nil") }
    }
    defer { auth.removeStateDidChangeListener(handle) }

    let result = try await auth.signIn(withFirebaseIDToken: "eyJ.firebase.token")

    #expect(result.user.uid == "fb-1" && !result.user.isAnonymous)
    #expect(result.user.email == "a@example.com")
    #expect(result.additionalUserInfo == AdditionalUserInfo(providerID: "password", isNewUser: false))
    #expect(stub.methods == ["accounts:signInWithFirebaseIdToken", "accounts:lookup"])
    let exchange = stub.seen[0]
    #expect(exchange.path == "/v1/accounts:signInWithFirebaseIdToken")
    #expect(exchange.query == "key=test-key")
    #expect(exchange.json["idToken"] as? String == "eyJ.firebase.token")
    #expect(exchange.json["returnSecureToken"] as? Bool == true)
    #expect(store.load()?.uid == "fb-1" && store.load()?.refreshToken == "refresh-9")
    auth.drain()
    #expect(heard.withLock { $0 } == ["nil", "fb-1"])
  }

  @Test func aRefusedTokenIsAnErrorAndLeavesNoUser() async throws {
    let stub = StubServer()
    stub.on("accounts:signInWithFirebaseIdToken", status: 400, StubServer.error("INVALID_ID_TOKEN"))
    let auth = stub.auth()
    await #expect(throws: AuthError.self) { try await auth.signIn(withFirebaseIDToken: "forged") }
    #expect(auth.currentUser == nil)
  }
}
