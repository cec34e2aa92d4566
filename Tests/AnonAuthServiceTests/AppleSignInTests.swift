import AnonAuthCrypto
import AnonAuthStore
import AnonAuthTestSupport
import AnonAuthWire
import Foundation
import Testing

@testable import AnonAuthService

/// Sign in with Apple through the service: apple.com configured as a project would
/// (Apple's issuer, the app's bundle id and Services ID), nonces that sign in once, the
/// name the app sends, imported Apple users, and the provider's secrets at rest.
@Suite struct AppleSignInTests {
  static let bundleID = "com.example.app"
  static let servicesID = "com.example.web"

  /// The harness with apple.com (inline keys, Apple's issuer by default) as its only
  /// provider.
  static func withApple<T>(_ body: (LinkingHarness, FakeIssuer) async throws -> T) async throws -> T {
    try await LinkingHarness.with { h in
      let apple = try FakeIssuer(issuer: "https://appleid.apple.com", clientID: bundleID)
      try await h.updateConfig(
        {
          $0.idps = [
            IdpConfig(
              providerId: "apple.com", enabled: true, jwksJson: apple.jwksJSON,
              clientIds: [bundleID, servicesID])
          ]
        },
        mask: ["idps"])
      return try await body(h, apple)
    }
  }

  static func hex(_ text: String) -> String { Hex.encode(SHA256.hash(Array(text.utf8))) }

  /// An Apple ID token as Apple makes it: no name, the nonce hashed, `email_verified` a
  /// string.
  static func token(
    _ apple: FakeIssuer, sub: String, now: Int64, rawNonce: String, email: String? = nil,
    audience: String = bundleID
  ) throws -> String {
    var claims = apple.claims(sub: sub, now: now)
    claims["name"] = nil
    claims["aud"] = .string(audience)
    claims["exp"] = .int(now + 600)
    claims["nonce"] = .string(hex(rawNonce))
    claims["nonce_supported"] = true
    if let email {
      claims["email"] = .string(email)
      claims["email_verified"] = "true"
      claims["is_private_email"] = "true"
    }
    return try apple.sign(claims)
  }

  static func credential(_ token: String, rawNonce: String, name: String = "") -> Credential {
    Credential(providerId: "apple.com", idToken: token, nonce: rawNonce, displayName: name)
  }

  func usedNonces(_ h: LinkingHarness) async throws -> Int64 {
    try await h.store.read { db in try UsedNoncesRepository.count(db) }
  }

  @Test func aTokenSignsInOnceAndOnlyWithItsRawNonce() async throws {
    try await Self.withApple { h, apple in
      let token = try Self.token(
        apple, sub: "001.apple.1", now: h.nowSeconds, rawNonce: "raw-1", email: "q7x@privaterelay.appleid.com"
      )
      // The leaked token replayed without its nonce, or with the claim sent back: refused.
      await expectLinkError(.missingOrInvalidNonce) {
        try await h.signIn(Self.credential(token, rawNonce: ""))
      }
      await expectLinkError(.missingOrInvalidNonce) {
        try await h.signIn(Self.credential(token, rawNonce: Self.hex("raw-1")))
      }
      let first = try await h.signIn(Self.credential(token, rawNonce: "raw-1", name: "Ada Lovelace"))
      #expect(first.isNewUser && first.signInProvider == "apple.com")
      #expect(first.account?.email == "q7x@privaterelay.appleid.com" && first.account?.emailVerified == true)
      #expect(first.account?.displayName == "Ada Lovelace")
      #expect(first.account?.providers.map(\.providerId) == ["apple.com"])
      let claims = try await h.verify(first.idToken)
      #expect(claims.signInProvider == "apple.com")
      // The same token with the right nonce again, while it lives: a replay.
      let replay = await expectLinkError(.missingOrInvalidNonce) {
        try await h.signIn(Self.credential(token, rawNonce: "raw-1"))
      }
      #expect(replay?.message.contains("Duplicate credential") == true)
      #expect(try await usedNonces(h) == 1)
      // A later sign-in: a new nonce, no email (Apple sends it once), another name that
      // does not replace the account's.
      h.clock.advance(seconds: 30)
      let later = try await h.signIn(
        Self.credential(
          try Self.token(
            apple, sub: "001.apple.1", now: h.nowSeconds, rawNonce: "raw-2", audience: Self.servicesID),
          rawNonce: "raw-2", name: "Someone Else"))
      #expect(later.localId == first.localId && !later.isNewUser)
      #expect(later.account?.displayName == "Ada Lovelace")
      // Another app's bundle id is refused.
      await expectLinkError(.invalidIdpResponse) {
        try await h.signIn(
          Self.credential(
            try Self.token(
              apple, sub: "001.apple.1", now: h.nowSeconds, rawNonce: "raw-3", audience: "com.other"),
            rawNonce: "raw-3"))
      }
      // Once the tokens have expired the clean-up pass forgets their nonces.
      #expect(try await usedNonces(h) == 2)
      h.clock.advance(seconds: 700)
      _ = try await CleanupWorker(environment: h.env).runPass(projectID: nil, trigger: "test")
      #expect(try await usedNonces(h) == 0)
    }
  }

  @Test func aRefusedLinkLeavesTheNonceForTheSignInThatFollows() async throws {
    try await Self.withApple { h, apple in
      let owner = try await h.signIn(
        Self.credential(
          try Self.token(apple, sub: "001.owner", now: h.nowSeconds, rawNonce: "o-1"), rawNonce: "o-1"))
      let anonymous = try await h.anonymous()
      h.clock.advance(seconds: 1)
      let token = try Self.token(apple, sub: "001.owner", now: h.nowSeconds, rawNonce: "o-2")
      // The identity is another account's: the link fails and keeps nothing, so the app
      // signs in with the same credential, as FirebaseAuth's flow does.
      await expectLinkError(.credentialAlreadyInUse) {
        try await h.link(anonymous.idToken, Self.credential(token, rawNonce: "o-2"))
      }
      let signedIn = try await h.signIn(Self.credential(token, rawNonce: "o-2"))
      #expect(signedIn.localId == owner.localId)
      await expectLinkError(.missingOrInvalidNonce) {
        try await h.signIn(Self.credential(token, rawNonce: "o-2"))
      }
      // Linking takes the app's name onto an account without one.
      let fresh = try await h.anonymous()
      h.clock.advance(seconds: 1)
      let linked = try await h.link(
        fresh.idToken,
        Self.credential(
          try Self.token(apple, sub: "001.linked", now: h.nowSeconds, rawNonce: "l-1"), rawNonce: "l-1",
          name: "Grace Hopper"))
      #expect(linked.localId == fresh.localId && linked.account?.displayName == "Grace Hopper")
      // A name the sign-up rules refuse is refused.
      await expectLinkError(.invalidArgument) {
        try await h.signIn(
          Self.credential(
            try Self.token(apple, sub: "001.x", now: h.nowSeconds, rawNonce: "x-1"), rawNonce: "x-1",
            name: "bad\u{0}name"))
      }
    }
  }

  @Test func anImportedAppleUserSignsInWithItsUid() async throws {
    try await Self.withApple { h, apple in
      let context = CallContext(
        method: "/\(AdminService.name)/ImportAccounts", metadata: ["authorization": "Bearer \(h.adminKey)"],
        peerIP: LinkingHarness.peer, requestID: "test")
      let imported = try await h.admin.importAccounts(
        ImportAccountsRequest(
          projectId: LinkingHarness.projectID,
          accounts: [
            ImportedAccount(
              localId: "firebase-uid-apple", email: "r5@privaterelay.appleid.com", emailVerified: true,
              providers: [
                ImportedProvider(
                  providerId: "apple.com", rawId: "000111.firebase.2222", email: "r5@privaterelay.appleid.com"
                )
              ])
          ]), context: context)
      #expect(imported.imported == 1)
      let signedIn = try await h.signIn(
        Self.credential(
          try Self.token(apple, sub: "000111.firebase.2222", now: h.nowSeconds, rawNonce: "i-1"),
          rawNonce: "i-1"))
      #expect(signedIn.localId == "firebase-uid-apple" && !signedIn.isNewUser)
      #expect(signedIn.signInProvider == "apple.com")
    }
  }

  @Test func theRevocationKeyIsSealedAndNeverReturned() async throws {
    try await Self.withApple { h, apple in
      let key = try Self.p8PEM()
      try await h.updateConfig(
        {
          $0.idps = [
            IdpConfig(
              providerId: "apple.com", enabled: true, jwksJson: apple.jwksJSON, clientIds: [Self.bundleID],
              teamId: "TEAM123456", keyId: "KEY1234567", privateKey: key)
          ]
        }, mask: ["idps"])
      let stored = try await h.store.read { db in
        try ProjectsRepository.get(db, LinkingHarness.projectID)?.idpsJSON ?? ""
      }
      #expect(!stored.contains("PRIVATE KEY") && stored.contains("private_key_sealed"))
      let context = CallContext(
        method: "/\(AdminService.name)/GetProjectConfig", metadata: ["authorization": "Bearer \(h.adminKey)"],
        peerIP: LinkingHarness.peer, requestID: "test")
      let shown = try h.admin.getProjectConfig(
        GetProjectConfigRequest(projectId: LinkingHarness.projectID), context: context)
      #expect(shown.idps.first?.privateKey == "")
      #expect(shown.idps.first?.teamId == "TEAM123456" && shown.idps.first?.clientIds == [Self.bundleID])
      // Sent again without the key: the key stays.
      try await h.updateConfig(
        {
          $0.idps = [
            IdpConfig(
              providerId: "apple.com", enabled: true, jwksJson: apple.jwksJSON, clientIds: [Self.bundleID],
              teamId: "TEAM123456", keyId: "KEY1234567")
          ]
        }, mask: ["idps"])
      let project = try #require(
        try await h.store.read { db in try ProjectsRepository.get(db, LinkingHarness.projectID) })
      let config = try ProviderSettings.config("apple.com", project: project, masterKey: h.env.masterKey)
      #expect(config.privateKey == key)
      // What is refused.
      for bad in [
        IdpConfig(
          providerId: "apple.com", enabled: true, clientIds: [Self.bundleID], privateKey: "not a key"),
        IdpConfig(providerId: "apple.com", enabled: true, clientIds: [Self.bundleID], teamId: "TEAM-1"),
        IdpConfig(providerId: "google.com", enabled: true, clientId: "g", teamId: "TEAM1"),
        IdpConfig(providerId: "apple.com", enabled: true, clientIds: [""]),
        IdpConfig(providerId: "apple.com", enabled: true),
      ] {
        await expectLinkError(.invalidConfig) {
          try await h.updateConfig({ $0.idps = [bad] }, mask: ["idps"])
        }
      }
    }
  }

  /// A P-256 key as Apple's portal hands it out (PKCS#8 PEM), made with OpenSSL's CLI.
  /// Through `ChildProcess`, not Foundation's `Process`, whose `run()` crashed in its own
  /// memcpy here in CI while other suites held many descriptors open.
  static func p8PEM(curve: String = "P-256") throws -> String {
    let child = try ChildProcess(
      "/usr/bin/openssl", ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:\(curve)"],
      environment: [:])
    let data = child.stdout?.readDataToEndOfFile() ?? Data()
    let status = child.wait()
    guard status == 0 else { throw POSIXError(.EIO) }
    return String(decoding: data, as: UTF8.self)
  }
}
