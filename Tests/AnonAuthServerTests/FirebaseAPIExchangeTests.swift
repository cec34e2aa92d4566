import AnonAuthCrypto
import AnonAuthService
import AnonAuthWire
import Foundation
import Testing

@testable import AnonAuthServer

/// `accounts:signInWithFirebaseIdToken`, AnonAuth's JSON form of the native
/// SignInWithFirebaseIdToken: a valid Firebase ID token signs in to the account with its
/// uid and is answered like `signInWithPassword`; a forged one is refused, making nothing.
@Suite struct FirebaseAPIExchangeTests {
  static let firebaseProject = "fb-project"
  static let kid = "fb-kid-1"

  /// Turns the exchange on for the harness's project, trusting `key`'s certificate, with
  /// unknown uids created on first use.
  static func configure(_ h: FirebaseAPIHarness, key: RSASigningKey) async throws {
    let pem = try X509Certificate.selfSigned(
      for: key, commonName: "securetoken.system.gserviceaccount.com",
      validFrom: Date(timeIntervalSince1970: 1_700_000_000), validFor: 86_400)
    var config = ProjectConfig()
    config.projectId = FirebaseAPIHarness.projectID
    config.firebaseProjectId = firebaseProject
    config.firebaseCertsJson = JSONValue.object([kid: .string(pem)]).jsonText
    config.firebaseCreateUnknownUsers = true
    _ = try await h.router.handle(
      CallContext(
        method: AdminServiceMethods.updateProjectConfig.path,
        metadata: ["authorization": "Bearer \(h.adminKey)"], peerIP: "127.0.0.1", requestID: "setup"),
      payload: UpdateProjectConfigRequest(
        config: config,
        updateMask: ["firebase_project_id", "firebase_certs_json", "firebase_create_unknown_users"]
      ).serializedBytes())
  }

  /// A Firebase ID token for `uid`, anonymous, valid at the harness clock's now.
  static func token(_ h: FirebaseAPIHarness, uid: String, key: RSASigningKey) throws -> String {
    let now = h.clock.nowMs() / 1000
    let claims: [String: JSONValue] = [
      "iss": .string("https://securetoken.google.com/" + firebaseProject), "aud": .string(firebaseProject),
      "sub": .string(uid), "user_id": .string(uid), "iat": .int(now - 60), "exp": .int(now + 3540),
      "auth_time": .int(now - 600), "provider_id": "anonymous",
      "firebase": ["identities": [:], "sign_in_provider": "anonymous"],
    ]
    return try JWT.sign(claims: claims, key: key, kid: kid)
  }

  @Test func aFirebaseTokenSignsInToTheAccountWithItsUid() async throws {
    let key = try RSASigningKey.generate(bits: 2048)
    try await FirebaseAPIHarness.with { h in
      try await Self.configure(h, key: key)
      let token = try Self.token(h, uid: "fb-uid-1", key: key)
      let answer = await h.post(
        "/identitytoolkit.googleapis.com/v1/accounts:signInWithFirebaseIdToken",
        ["idToken": .string(token), "returnSecureToken": true])
      #expect(answer.status == 200)
      #expect(answer["kind"] == "identitytoolkit#VerifyPasswordResponse")
      #expect(answer["localId"] == "fb-uid-1")
      #expect(answer["expiresIn"] == "3600" && answer["registered"] == true)
      #expect(answer["isNewUser"] == true && answer["providerId"] == "anonymous")
      #expect(answer["refreshToken"]?.stringValue?.isEmpty == false)
      // AnonAuth's own token for that uid: lookup accepts it.
      let lookup = await h.post("/v1/accounts:lookup", ["idToken": answer["idToken"] ?? nil])
      #expect(lookup["users"]?.arrayValue?.first?["localId"] == "fb-uid-1")
      // Again, at the short path: the same account, no longer new.
      let again = await h.post("/v1/accounts:signInWithFirebaseIdToken", ["idToken": .string(token)])
      #expect(again.status == 200 && again["localId"] == "fb-uid-1" && again["isNewUser"] == false)
      #expect(h.callRecords.contains { $0.name == "accounts:signInWithFirebaseIdToken" })
    }
  }

  @Test func aForgedOrMissingTokenIsRefusedAndMakesNoAccount() async throws {
    let key = try RSASigningKey.generate(bits: 2048)
    let other = try RSASigningKey.generate(bits: 2048)
    try await FirebaseAPIHarness.with { h in
      try await Self.configure(h, key: key)
      let forgedToken = try Self.token(h, uid: "fb-forged", key: other)
      let forged = await h.post("/v1/accounts:signInWithFirebaseIdToken", ["idToken": .string(forgedToken)])
      #expect(forged.status == 400)
      #expect(forged.errorMessage != nil && forged["idToken"] == nil)
      let missing = await h.post("/v1/accounts:signInWithFirebaseIdToken", ["returnSecureToken": true])
      #expect(missing.status == 400 && missing.errorMessage == "MISSING_ID_TOKEN")
      // The forged uid was not created: a valid token for it is a new user.
      let validToken = try Self.token(h, uid: "fb-forged", key: key)
      let valid = await h.post("/v1/accounts:signInWithFirebaseIdToken", ["idToken": .string(validToken)])
      #expect(valid.status == 200 && valid["isNewUser"] == true)
    }
  }
}
