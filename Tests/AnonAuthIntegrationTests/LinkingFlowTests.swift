import AnonAuthCrypto
import AnonAuthRPCClient
import AnonAuthWire
import Foundation
import Testing

/// The seed's whole story over TLS against the real daemon: an anonymous user links a
/// credential, signs out, signs in again with it, and is the same uid.
@Suite(.serialized) struct LinkingFlowTests {
  static let googleClientID = "it-client.apps.googleusercontent.com"

  @Test func anonymousThenEmailPasswordThenSignInAgain() async throws {
    let daemon = try await DaemonProcess.start()
    let client = try daemon.client()
    let auth = Auth(client: client, apiKey: daemon.apiKey)
    let anonymous = try await auth.signInAnonymously()
    let uid = anonymous.uid
    #expect(anonymous.isAnonymous)
    let oldToken = try await anonymous.getIDToken()
    try await Task.sleep(for: .milliseconds(1100))  // valid_since is in whole seconds

    let linked = try await anonymous.link(
      with: EmailAuthProvider.credential(withEmail: "Seed@Example.com", password: "correct horse"))
    #expect(linked.user.uid == uid)
    #expect(!linked.user.isAnonymous && !linked.isNewUser)
    #expect(linked.providerID == "password")
    #expect(auth.currentUser?.isAnonymous == false)
    // The link revoked the anonymous ID token; the new one verifies.
    let newToken = try await linked.user.getIDToken()
    let verified = try await verify(newToken, daemon: daemon, client: client)
    #expect(verified.uid == uid && verified.signInProvider == "password" && !verified.isAnonymous)
    let revoked = await #expect(throws: RPCError.self) {
      _ = try await verify(oldToken, daemon: daemon, client: client)
    }
    #expect(revoked?.reason == "TOKEN_EXPIRED")

    try auth.signOut()
    #expect(auth.currentUser == nil)
    let again = try await auth.signIn(withEmail: "seed@example.com", password: "correct horse")
    #expect(again.user.uid == uid)
    #expect(!again.isNewUser && again.providerID == "password")
    let info = try await again.user.accountInfo()
    #expect(info.localId == uid && info.email == "seed@example.com" && !info.isAnonymous)
    #expect(info.scheduledDeletionAtMs == 0)

    // Typed errors from the client library.
    await expectAuthError(.wrongPasswordOrUser) {
      _ = try await auth.signIn(withEmail: "seed@example.com", password: "wrong horse")
    }
    await expectAuthError(.wrongPasswordOrUser) {
      _ = try await auth.signIn(withEmail: "nobody@example.com", password: "correct horse")
    }
    await expectAuthError(.providerAlreadyLinked) {
      _ = try await again.user.link(
        with: EmailAuthProvider.credential(withEmail: "x@example.com", password: "123456"))
    }
    let other = Auth(client: client, apiKey: daemon.apiKey)
    let otherUser = try await other.signInAnonymously()
    await expectAuthError(.weakPassword) {
      _ = try await otherUser.link(
        with: EmailAuthProvider.credential(withEmail: "y@example.com", password: "123"))
    }
    await expectAuthError(.invalidEmail) {
      _ = try await otherUser.link(
        with: EmailAuthProvider.credential(withEmail: "not-an-email", password: "123456"))
    }
    await expectAuthError(.emailAlreadyInUse) {
      _ = try await otherUser.link(
        with: EmailAuthProvider.credential(withEmail: "SEED@example.com", password: "123456"))
    }
    await expectAuthError(.emailAlreadyInUse) {
      _ = try await other.createUser(withEmail: "seed@example.com", password: "123456")
    }
    let created = try await other.createUser(withEmail: "new@example.com", password: "123456")
    #expect(created.isNewUser && !created.user.isAnonymous && created.user.uid != uid)
  }

  @Test func anonymousThenGoogleThenSignInAgain() async throws {
    let daemon = try await DaemonProcess.start()
    let client = try daemon.client()
    let google = try GoogleLikeIssuer()
    try await configureGoogle(daemon: daemon, client: client, jwks: google.jwksJSON)

    let auth = Auth(client: client, apiKey: daemon.apiKey)
    let anonymous = try await auth.signInAnonymously()
    let uid = anonymous.uid
    let idToken = try google.idToken(sub: "1098765", email: "seed.user@gmail.com")
    let linked = try await anonymous.link(
      with: GoogleAuthProvider.credential(withIDToken: idToken, accessToken: ""))
    #expect(linked.user.uid == uid && !linked.user.isAnonymous && linked.providerID == "google.com")
    let info = try await linked.user.accountInfo()
    #expect(info.providers.map(\.providerId) == ["google.com"])
    #expect(info.providers.first?.rawId == "1098765")
    #expect(info.email == "seed.user@gmail.com" && info.emailVerified)

    try auth.signOut()
    let again = try await auth.signIn(
      with: GoogleAuthProvider.credential(withIDToken: idToken, accessToken: ""))
    #expect(again.user.uid == uid && !again.isNewUser && again.providerID == "google.com")
    let verified = try await verify(try await again.user.getIDToken(), daemon: daemon, client: client)
    #expect(verified.signInProvider == "google.com")

    // The same Google identity on another anonymous account: credential-already-in-use,
    // naming the provider and email only.
    let other = Auth(client: client, apiKey: daemon.apiKey)
    let otherUser = try await other.signInAnonymously()
    await expectAuthError(.credentialAlreadyInUse(providerID: "google.com", email: "seed.user@gmail.com")) {
      _ = try await otherUser.link(with: GoogleAuthProvider.credential(withIDToken: idToken, accessToken: ""))
    }
    // A token signed by someone else is not a Google credential.
    let forger = try GoogleLikeIssuer()
    await expectAuthError(.invalidCredential) {
      _ = try await otherUser.link(
        with: GoogleAuthProvider.credential(
          withIDToken: try forger.idToken(sub: "1", email: nil), accessToken: ""))
    }
    // A new Google identity signs in to a new permanent account.
    let fresh = Auth(client: client, apiKey: daemon.apiKey)
    let first = try await fresh.signIn(
      with: OAuthProvider.credential(
        providerID: "google.com", idToken: try google.idToken(sub: "2222", email: nil)))
    #expect(first.isNewUser && !first.user.isAnonymous)
    // Unlinking its only sign-in method is refused (the account could never be signed in
    // to again); a provider it does not have is NO_SUCH_PROVIDER.
    do throws(AuthError) {
      _ = try await first.user.unlink(fromProvider: "google.com")
      Issue.record("the only sign-in method was unlinked")
    } catch {
      #expect(error.name == "LAST_SIGN_IN_METHOD")
    }
    await expectAuthError(.noSuchProvider) { _ = try await first.user.unlink(fromProvider: "facebook.com") }
  }

  // MARK: Helpers

  func verify(_ token: String, daemon: DaemonProcess, client: RPCClient) async throws(RPCError)
    -> VerifyIdTokenResponse
  {
    try await client.call(
      "/anonauth.v1.TokenService/VerifyIdToken", VerifyIdTokenRequest(idToken: token, checkRevoked: true),
      metadata: ["x-api-key": daemon.apiKey], as: VerifyIdTokenResponse.self)
  }

  func configureGoogle(daemon: DaemonProcess, client: RPCClient, jwks: String) async throws {
    var config = ProjectConfig()
    config.projectId = "demo-project"
    config.idps = [
      IdpConfig(providerId: "google.com", enabled: true, clientId: Self.googleClientID, jwksJson: jwks)
    ]
    _ = try await client.call(
      "/anonauth.v1.AdminService/UpdateProjectConfig",
      UpdateProjectConfigRequest(config: config, updateMask: ["idps"]),
      metadata: ["authorization": "Bearer \(daemon.adminKey)"], as: ProjectConfig.self)
  }
}

/// Plays Google for the test: an RSA key whose JWKS the project is given inline, and
/// ID tokens shaped like Google's.
struct GoogleLikeIssuer {
  let key: RSASigningKey
  let kid: String

  init() throws {
    key = try RSASigningKey.generate(bits: 2048)
    kid = try SecureRandom.base64URL(byteCount: 8)
  }

  var jwksJSON: String {
    JSONValue.object(["keys": [.object(key.publicKey.jwk(kid: kid).mapValues { .string($0) })]]).jsonText
  }

  func idToken(sub: String, email: String?) throws -> String {
    let now = Int64(Date().timeIntervalSince1970)
    var claims: [String: JSONValue] = [
      "iss": "https://accounts.google.com", "aud": .string(LinkingFlowTests.googleClientID),
      "azp": .string(LinkingFlowTests.googleClientID), "sub": .string(sub), "iat": .int(now),
      "exp": .int(now + 3600),
    ]
    if let email {
      claims["email"] = .string(email)
      claims["email_verified"] = true
    }
    return try JWT.sign(claims: claims, key: key, kid: kid)
  }
}
