import Foundation
import Testing

@testable import AnonAuthClient

/// ID tokens are refreshed at the token endpoint when fewer than 5 minutes remain, by one
/// call however many ask at once; a refused refresh token signs out.
@Suite struct RefreshTests {
  /// An `Auth` signed in (from its store) with a token that expires in `seconds`.
  func signedIn(_ stub: StubServer, expiringIn seconds: TimeInterval) -> Auth {
    let store = MemorySessionStore()
    store.save(
      Session(
        uid: "u1", idToken: "old-id", refreshToken: "old-refresh",
        expirationDate: Date().addingTimeInterval(seconds), isAnonymous: true))
    return stub.auth(store: store)
  }

  @Test func aFreshTokenIsReturnedWithoutACall() async throws {
    let stub = StubServer()
    let auth = signedIn(stub, expiringIn: 3600)
    #expect(try await auth.currentUser?.getIDToken() == "old-id")
    #expect(stub.seen.isEmpty)
  }

  @Test func aTokenAboutToExpireIsRefreshedWithAForm() async throws {
    let stub = StubServer()
    stub.on(
      "token",
      #"{"id_token":"new-id","refresh_token":"new-refresh","expires_in":"3600","token_type":"Bearer","user_id":"u1"}"#
    )
    let auth = signedIn(stub, expiringIn: 240)

    #expect(try await auth.currentUser?.getIDToken() == "new-id")

    let call = try #require(stub.seen.first)
    #expect(call.path == "/v1/token")
    #expect(call.query == "key=test-key")
    #expect(call.contentType == "application/x-www-form-urlencoded")
    #expect(call.form == ["grant_type": "refresh_token", "refresh_token": "old-refresh"])
    // The rotated refresh token is the one spent next.
    stub.on("token", #"{"id_token":"newer-id","refresh_token":"newer-refresh","expires_in":"3600"}"#)
    #expect(try await auth.currentUser?.getIDToken(forcingRefresh: true) == "newer-id")
    #expect(stub.seen[1].form["refresh_token"] == "new-refresh")
  }

  @Test func manyCallersShareOneRefresh() async throws {
    let stub = StubServer()
    stub.on("token", #"{"id_token":"new-id","refresh_token":"new-refresh","expires_in":"3600"}"#)
    let auth = signedIn(stub, expiringIn: 10)
    let user = try #require(auth.currentUser)

    let tokens = try await withThrowingTaskGroup(of: String.self) { group in
      for _ in 0..<20 { group.addTask { try await user.getIDToken() } }
      return try await group.reduce(into: []) { $0.append($1) }
    }

    #expect(tokens == Array(repeating: "new-id", count: 20))
    #expect(stub.methods == ["token"])
  }

  @Test func aRefusedRefreshTokenSignsOut() async throws {
    let stub = StubServer()
    stub.on("token", status: 400, StubServer.error("TOKEN_EXPIRED"))
    let store = MemorySessionStore()
    store.save(
      Session(
        uid: "u1", idToken: "old-id", refreshToken: "old-refresh", expirationDate: Date(), isAnonymous: true))
    let auth = stub.auth(store: store)
    let user = try #require(auth.currentUser)

    let error = await #expect(throws: AuthError.self) { try await user.getIDToken() }

    #expect(error?.code == .userTokenExpired)
    #expect(auth.currentUser == nil)
    #expect(store.load() == nil)
    let again = await #expect(throws: AuthError.self) { try await user.getIDToken() }
    #expect(again?.code == .nullUser)
  }

  @Test func aNetworkFailureKeepsTheSession() async throws {
    let stub = StubServer()
    stub.on("token", status: 0, "")
    let auth = signedIn(stub, expiringIn: 10)
    let user = try #require(auth.currentUser)
    let error = await #expect(throws: AuthError.self) { try await user.getIDToken() }
    #expect(error?.code == .networkError)
    #expect(auth.currentUser?.uid == "u1")
  }
}
