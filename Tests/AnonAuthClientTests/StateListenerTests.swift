import Foundation
import Synchronization
import Testing

@testable import AnonAuthClient

/// Listeners hear the current user when added, then every sign-in and sign-out, not
/// token refreshes; a removed listener hears nothing more.
@Suite struct StateListenerTests {
  @Test func listenersHearSignInsAndSignOuts() async throws {
    let stub = StubServer.anonymousU1()
    stub.on("token", #"{"id_token":"id-2","refresh_token":"refresh-2","expires_in":"3600"}"#)
    stub.on("accounts:signInWithPassword", StubServer.signIn(uid: "u2"))
    stub.on("accounts:lookup", StubServer.lookup(uid: "u2", email: "b@example.com", providers: ["password"]))
    stub.on("accounts:signUp", StubServer.signIn(uid: "u3"))
    stub.on("accounts:lookup", StubServer.lookup(uid: "u3"))
    let auth = stub.auth()
    let heard = Mutex<[String]>([])
    let removedHeard = Mutex<[String]>([])

    let handle = auth.addStateDidChangeListener { _, user in heard.withLock { $0.append(user?.uid ?? "nil") }
    }
    let removed = auth.addStateDidChangeListener { _, user in
      removedHeard.withLock { $0.append(user?.uid ?? "nil") }
    }
    auth.removeStateDidChangeListener(removed)

    let user = try await auth.signInAnonymously().user
    _ = try await user.getIDToken(forcingRefresh: true)
    _ = try await auth.signIn(withEmail: "b@example.com", password: "pw")
    try auth.signOut()
    try auth.signOut()
    auth.removeStateDidChangeListener(handle)
    _ = try await auth.signInAnonymously()
    auth.drain()

    #expect(heard.withLock { $0 } == ["nil", "u1", "u2", "nil"])
    #expect(removedHeard.withLock { $0 } == ["nil"])
  }
}
