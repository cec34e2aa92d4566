import AnonAuthCrypto
import AnonAuthRPCClient
import AnonAuthWire
import Foundation
import Testing

/// The Firebase session exchange through the Swift client, over TLS against the real
/// daemon: the device's Firebase user becomes the AnonAuth user with the same uid.
@Suite(.serialized) struct FirebaseExchangeFlowTests {
  static let firebaseProject = "it-firebase-project"

  @Test func aFirebaseUserMovesWithItsUID() async throws {
    let daemon = try await DaemonProcess.start()
    let client = try daemon.client()
    let key = try RSASigningKey.generate(bits: 2048)
    let kid = "it-securetoken"
    let certificate = try X509Certificate.selfSigned(
      for: key, commonName: "securetoken.system.gserviceaccount.com", validFrom: Date() - 3600,
      validFor: 86_400)
    let certs = JSONValue.object([kid: .string(certificate)]).jsonText
    try await configure(daemon: daemon, client: client, certs: certs, create: true)

    let uid = "itFirebaseUser" + (try SecureRandom.alphanumeric(8))
    let auth = Auth(client: client, apiKey: daemon.apiKey)
    let first = try await auth.signIn(withFirebaseIDToken: try token(uid: uid, key: key, kid: kid))
    #expect(first.user.uid == uid && first.user.isAnonymous && first.isNewUser)
    #expect(first.providerID == "anonymous")
    #expect(auth.currentUser?.uid == uid)

    try await configure(daemon: daemon, client: client, certs: certs, create: false)
    try auth.signOut()
    let again = try await auth.signIn(withFirebaseIDToken: try token(uid: uid, key: key, kid: kid))
    #expect(again.user.uid == uid && !again.isNewUser)
    // The session refreshes.
    #expect(!(try await again.user.getIDToken(forceRefresh: true)).isEmpty)

    let unknown = try token(uid: "it-unknown", key: key, kid: kid)
    await expectAuthError(.userNotFound) { _ = try await auth.signIn(withFirebaseIDToken: unknown) }
    await expectAuthError(.invalidCredential) {
      _ = try await auth.signIn(withFirebaseIDToken: "not-a-token")
    }
    #expect(auth.currentUser?.uid == uid)
  }

  func token(uid: String, key: RSASigningKey, kid: String) throws -> String {
    let now = Int64(Date().timeIntervalSince1970)
    let claims: [String: JSONValue] = [
      "iss": .string("https://securetoken.google.com/" + Self.firebaseProject),
      "aud": .string(Self.firebaseProject), "sub": .string(uid), "user_id": .string(uid),
      "iat": .int(now), "exp": .int(now + 3600), "auth_time": .int(now - 60), "provider_id": "anonymous",
      "firebase": ["identities": [:], "sign_in_provider": "anonymous"],
    ]
    return try JWT.sign(claims: claims, key: key, kid: kid)
  }

  func configure(daemon: DaemonProcess, client: RPCClient, certs: String, create: Bool) async throws {
    var config = ProjectConfig()
    config.projectId = "demo-project"
    config.firebaseProjectId = Self.firebaseProject
    config.firebaseCertsJson = certs
    config.firebaseCreateUnknownUsers = create
    _ = try await client.call(
      "/anonauth.v1.AdminService/UpdateProjectConfig",
      UpdateProjectConfigRequest(
        config: config,
        updateMask: ["firebase_project_id", "firebase_certs_json", "firebase_create_unknown_users"]),
      metadata: ["authorization": "Bearer \(daemon.adminKey)"], as: ProjectConfig.self)
  }
}
