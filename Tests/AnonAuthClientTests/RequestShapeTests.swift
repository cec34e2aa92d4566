import Foundation
import Testing

@testable import AnonAuthClient

/// What the client sends: Firebase's paths, the key as `?key=`, Firebase's field names.
@Suite struct RequestShapeTests {
  @Test func anonymousSignInPostsSignUpThenLooksTheUserUp() async throws {
    let stub = StubServer.anonymousU1()
    let auth = stub.auth()

    let result = try await auth.signInAnonymously()

    #expect(result.user.uid == "u1")
    #expect(result.user.isAnonymous)
    #expect(result.additionalUserInfo == AdditionalUserInfo(providerID: "anonymous", isNewUser: true))
    #expect(auth.currentUser?.uid == "u1")
    #expect(stub.methods == ["accounts:signUp", "accounts:lookup"])
    let signUp = stub.seen[0]
    #expect(signUp.path == "/v1/accounts:signUp")
    #expect(signUp.query == "key=test-key")
    #expect(signUp.contentType == "application/json")
    #expect(signUp.json["returnSecureToken"] as? Bool == true)
    #expect(signUp.json["email"] == nil)
    #expect(stub.seen[1].json["idToken"] as? String == "id-1")
  }

  @Test func aSecondAnonymousSignInReturnsTheSameUserWithoutACall() async throws {
    let stub = StubServer.anonymousU1()
    let auth = stub.auth()
    _ = try await auth.signInAnonymously()
    let again = try await auth.signInAnonymously()
    #expect(again.user.uid == "u1")
    #expect(stub.methods.count == 2)
  }

  @Test func linkingEmailSendsSignUpWithTheIDTokenAndTheUserBecomesPermanent() async throws {
    let stub = StubServer.anonymousU1()
    stub.on("accounts:signUp", StubServer.signIn(uid: "u1", idToken: "id-2", refreshToken: "refresh-2"))
    stub.on(
      "accounts:lookup", StubServer.lookup(uid: "u1", email: "seed@example.com", providers: ["password"]))
    let auth = stub.auth()
    let user = try await auth.signInAnonymously().user

    let linked = try await user.link(
      with: EmailAuthProvider.credential(withEmail: "seed@example.com", password: "pw123456"))

    let link = stub.seen[2].json
    #expect(link["idToken"] as? String == "id-1")
    #expect(link["email"] as? String == "seed@example.com")
    #expect(link["password"] as? String == "pw123456")
    #expect(link["returnSecureToken"] as? Bool == true)
    #expect(linked.user.uid == "u1")
    #expect(!linked.user.isAnonymous)
    #expect(linked.user.email == "seed@example.com")
    #expect(linked.user.providerData.map(\.providerID) == ["password"])
    #expect(linked.additionalUserInfo?.isNewUser == false)
    #expect(try await auth.currentUser?.getIDToken() == "id-2")
  }

  @Test func providerCredentialsGoToSignInWithIdpAsAPostBody() async throws {
    let stub = StubServer()
    stub.on(
      "accounts:signInWithIdp",
      StubServer.signIn(uid: "g1").replacingOccurrences(of: "}", with: #","isNewUser":true}"#))
    stub.on(
      "accounts:lookup", StubServer.lookup(uid: "g1", email: "g@example.com", providers: ["google.com"]))
    stub.on("accounts:signInWithIdp", StubServer.signIn(uid: "f1"))
    stub.on("accounts:lookup", StubServer.lookup(uid: "f1", providers: ["facebook.com"]))
    let auth = stub.auth()

    let google = try await auth.signIn(
      with: GoogleAuthProvider.credential(withIDToken: "g.token+/=", accessToken: ""))
    let facebook = try await auth.signIn(with: FacebookAuthProvider.credential(withAccessToken: "fb&token"))

    let first = stub.seen[0].json
    #expect(first["postBody"] as? String == "providerId=google.com&id_token=g.token%2B%2F%3D")
    #expect(first["requestUri"] as? String == "http://localhost")
    #expect(first["returnSecureToken"] as? Bool == true)
    #expect(first["idToken"] == nil)
    #expect(google.additionalUserInfo == AdditionalUserInfo(providerID: "google.com", isNewUser: true))
    #expect(!google.user.isAnonymous)
    #expect(stub.seen[2].json["postBody"] as? String == "providerId=facebook.com&access_token=fb%26token")
    #expect(facebook.user.uid == "f1")
    #expect(auth.currentUser?.uid == "f1")
  }

  @Test func appleSendsTheRawNonceAndTheNameAsFirebaseAuthDoes() async throws {
    let stub = StubServer()
    stub.on("accounts:signInWithIdp", StubServer.signIn(uid: "a1"))
    stub.on("accounts:lookup", StubServer.lookup(uid: "a1", providers: ["apple.com"]))
    stub.on("accounts:revokeToken", "{}")
    let auth = stub.auth()
    var name = PersonNameComponents()
    name.givenName = "Ada"
    name.familyName = "Lovelace"
    _ = try await auth.signIn(
      with: OAuthProvider.appleCredential(withIDToken: "apple.token", rawNonce: "raw n", fullName: name))
    let user = #"{"name":{"firstName":"Ada","lastName":"Lovelace"}}"#
    let escaped = FormEncoding.escape(user)
    #expect(
      stub.seen[0].json["postBody"] as? String
        == "providerId=apple.com&id_token=apple.token&nonce=raw%20n&user=\(escaped)")
    // Without a name, no user field.
    #expect(
      OAuthProvider.appleCredential(withIDToken: "t", rawNonce: "n", fullName: nil).postBody
        == "providerId=apple.com&id_token=t&nonce=n")

    try await auth.revokeToken(withAuthorizationCode: "code+1")
    let revoke = stub.seen[2]
    #expect(revoke.path == "/v2/accounts:revokeToken")
    #expect(revoke.json["providerId"] as? String == "apple.com" && revoke.json["tokenType"] as? String == "3")
    #expect(revoke.json["token"] as? String == "code+1" && revoke.json["idToken"] as? String == "id-1")
  }

  @Test func emailCredentialsSignInWithPassword() async throws {
    let stub = StubServer()
    stub.on("accounts:signInWithPassword", StubServer.signIn(uid: "u1"))
    stub.on("accounts:lookup", StubServer.lookup(uid: "u1", email: "a@example.com", providers: ["password"]))
    let auth = stub.auth()
    let result = try await auth.signIn(
      with: EmailAuthProvider.credential(withEmail: "a@example.com", password: "pw"))
    #expect(result.user.email == "a@example.com")
    #expect(stub.seen[0].json["email"] as? String == "a@example.com")
    #expect(stub.seen[0].json["password"] as? String == "pw")
  }

  @Test func unlinkSendsDeleteProviderAndDeleteSignsOut() async throws {
    let stub = StubServer()
    stub.on("accounts:signInWithPassword", StubServer.signIn(uid: "u1"))
    stub.on(
      "accounts:lookup",
      StubServer.lookup(uid: "u1", email: "a@example.com", providers: ["password", "google.com"]))
    stub.on("accounts:update", #"{"localId":"u1"}"#)
    stub.on("accounts:lookup", StubServer.lookup(uid: "u1", email: "a@example.com", providers: ["password"]))
    stub.on("accounts:delete", #"{"kind":"identitytoolkit#DeleteAccountResponse"}"#)
    let auth = stub.auth()
    let user = try await auth.signIn(withEmail: "a@example.com", password: "pw").user

    let unlinked = try await user.unlink(fromProvider: "google.com")
    #expect(stub.seen[2].json["deleteProvider"] as? [String] == ["google.com"])
    #expect(unlinked.providerData.map(\.providerID) == ["password"])

    try await unlinked.delete()
    #expect(stub.seen[4].path == "/v1/accounts:delete")
    #expect(stub.seen[4].json["idToken"] as? String == "id-1")
    #expect(auth.currentUser == nil)
  }

  @Test func theBaseURLMayCarryAPathAndATrailingSlash() throws {
    for base in ["https://auth.example.com/tenant", "https://auth.example.com/tenant/"] {
      let transport = RESTTransport(
        baseURL: try #require(URL(string: base)), apiKey: "k+/", session: .shared)
      #expect(
        try transport.url("v1/accounts:signUp").absoluteString
          == "https://auth.example.com/tenant/v1/accounts:signUp?key=k%2B%2F")
    }
  }
}

extension RequestShapeTests {
  @Test func theEmulatorLayoutPutsTheAPIsHostsInThePath() async throws {
    let stub = StubServer()
    let auth = stub.auth()
    auth.useEmulator(withHost: stub.host, port: 9099)
    stub.on("accounts:signUp", StubServer.signIn(uid: "u1", expiresIn: "60"))
    stub.on("accounts:lookup", StubServer.lookup(uid: "u1"))
    stub.on("token", #"{"id_token":"id-2","refresh_token":"refresh-2","expires_in":"3600"}"#)

    let user = try await auth.signInAnonymously().user
    _ = try await user.getIDToken()

    #expect(
      stub.seen.map(\.path) == [
        "/identitytoolkit.googleapis.com/v1/accounts:signUp",
        "/identitytoolkit.googleapis.com/v1/accounts:lookup",
        "/securetoken.googleapis.com/v1/token",
      ])
    #expect(stub.seen.allSatisfy { $0.scheme == "http" && $0.port == 9099 })
  }
}
