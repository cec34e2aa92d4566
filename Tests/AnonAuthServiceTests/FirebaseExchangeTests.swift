import AnonAuthCrypto
import AnonAuthService
import AnonAuthStore
import AnonAuthWire
import Testing

/// SignInWithFirebaseIdToken: a device signed in to Firebase moves to the AnonAuth
/// account with the same uid.
@Suite struct FirebaseExchangeTests {
  static let certsURL = "https://certs.test/securetoken"

  /// Turns the exchange on with inline certificates (or with `certsURL`).
  static func configure(
    _ h: LinkingHarness, _ firebase: FakeFirebase, create: Bool = false, inline: Bool = true
  )
    async throws
  {
    try await h.updateConfig(
      { config in
        config.firebaseProjectId = FakeFirebase.projectID
        config.firebaseCertsJson = inline ? firebase.certsJSON : ""
        config.firebaseCertsUrl = inline ? "" : certsURL
        config.firebaseCreateUnknownUsers = create
      },
      mask: [
        "firebase_project_id", "firebase_certs_json", "firebase_certs_url", "firebase_create_unknown_users",
      ])
  }

  static func exchange(_ h: LinkingHarness, _ idToken: String, ip: String = LinkingHarness.peer)
    async throws(RPCError) -> AuthResponse
  {
    try await h.accounts.signInWithFirebaseIdToken(
      SignInWithFirebaseIdTokenRequest(idToken: idToken),
      context: h.context("SignInWithFirebaseIdToken", ip: ip))
  }

  /// An account with a chosen uid, as an import from Firebase leaves it.
  static func imported(_ h: LinkingHarness, uid: String, anonymous: Bool, email: String? = nil) async throws {
    let projectID = LinkingHarness.projectID
    let createdAt = h.clock.nowMs() - 86_400_000
    try await h.store.write { db in
      var account = AccountRecord(
        projectID: projectID, localID: uid, isAnonymous: anonymous, createdAtMs: createdAt)
      account.email = email
      try AccountsRepository.insert(db, account)
    }
  }

  @Test func anExistingAnonymousAccountIsSignedInto() async throws {
    let firebase = try FakeFirebase()
    try await LinkingHarness.with { h in
      try await Self.configure(h, firebase)
      try await Self.imported(h, uid: "fb-anon-1", anonymous: true)
      h.clock.advance(seconds: 5)
      let response = try await Self.exchange(h, try firebase.token(uid: "fb-anon-1", now: h.nowSeconds))
      #expect(response.localId == "fb-anon-1" && response.isAnonymous && !response.isNewUser)
      #expect(response.signInProvider == "anonymous")
      #expect(response.expiresIn == 3600 && !response.refreshToken.isEmpty)
      #expect(try await h.account("fb-anon-1").lastSignInAtMs == h.clock.nowMs())
      // AnonAuth's token for the same uid, with the Firebase token's auth_time.
      let verified = try await h.verify(response.idToken)
      #expect(verified.uid == "fb-anon-1" && verified.isAnonymous && verified.signInProvider == "anonymous")
      #expect(verified.authTime == h.nowSeconds - 600)
      // The session is an ordinary one: it refreshes.
      let refreshed = try await h.refresh(response.refreshToken)
      #expect(refreshed.localId == "fb-anon-1" && refreshed.signInProvider == "anonymous")
      #expect(try await h.signUpsCounted("anonymous") == 0)
    }
  }

  @Test func anExistingPermanentAccountIsSignedInto() async throws {
    let firebase = try FakeFirebase()
    try await LinkingHarness.with { h in
      try await Self.configure(h, firebase)
      let created = try await h.signUp(email: "ida@example.com", password: "secret-1")
      let uid = created.localId
      let password = try await Self.exchange(
        h, try firebase.token(uid: uid, now: h.nowSeconds, provider: "password", email: "ida@example.com"))
      #expect(password.localId == uid && !password.isAnonymous && !password.isNewUser)
      #expect(password.signInProvider == "password")
      #expect(password.account?.email == "ida@example.com")
      // A provider the AnonAuth account lacks is not claimed: its own provider is.
      let google = try await Self.exchange(
        h, try firebase.token(uid: uid, now: h.nowSeconds, provider: "google.com", email: "ida@example.com"))
      #expect(google.signInProvider == "password")
      // One the account holds is. (Linking needs a recent sign-in; the exchanged session
      // carries the Firebase token's auth_time, ten minutes old.)
      let fresh = try await h.signIn(email: "ida@example.com", password: "secret-1")
      _ = try await h.link(fresh.idToken, try h.googleCredential(sub: "g-ida"))
      let linked = try await Self.exchange(
        h, try firebase.token(uid: uid, now: h.nowSeconds, provider: "google.com", email: "ida@example.com"))
      #expect(linked.signInProvider == "google.com")
      #expect(try await h.verify(linked.idToken).signInProvider == "google.com")
    }
  }

  @Test func anUnknownUIDIsRefusedUnlessCreationIsOn() async throws {
    let firebase = try FakeFirebase()
    try await LinkingHarness.with { h in
      try await Self.configure(h, firebase)
      try await h.expectRefusedUnchanged("fb-new", .userNotFound) {
        try await Self.exchange(h, try firebase.token(uid: "fb-new", now: h.nowSeconds))
      }
    }
  }

  @Test func anUnknownAnonymousUIDIsCreatedWhenAllowed() async throws {
    let firebase = try FakeFirebase()
    try await LinkingHarness.with { h in
      try await Self.configure(h, firebase, create: true)
      try await h.updateConfig({ $0.autoCleanupEnabled = true }, mask: ["auto_cleanup_enabled"])
      let first = try await Self.exchange(h, try firebase.token(uid: "fb-new-anon", now: h.nowSeconds))
      #expect(first.localId == "fb-new-anon" && first.isAnonymous && first.isNewUser)
      #expect(first.signInProvider == "anonymous")
      let account = try await h.account("fb-new-anon")
      #expect(account.isAnonymous && account.email == nil && account.createdAtMs == h.clock.nowMs())
      // Made while clean-up is on: scheduled like any new anonymous account.
      #expect(account.scheduledDeletionAtMs == h.clock.nowMs() + 30 * 86_400_000)
      #expect(try await h.signUpsCounted("anonymous") == 1)
      // The next exchange finds it.
      let second = try await Self.exchange(h, try firebase.token(uid: "fb-new-anon", now: h.nowSeconds))
      #expect(second.localId == "fb-new-anon" && !second.isNewUser)
      #expect(try await h.signUpsCounted("anonymous") == 1)
    }
  }

  @Test func anUnknownUIDWithAnEmailBecomesAPermanentAccount() async throws {
    let firebase = try FakeFirebase()
    try await LinkingHarness.with { h in
      try await Self.configure(h, firebase, create: true)
      let token = try firebase.token(
        uid: "fb-new-g", now: h.nowSeconds, provider: "google.com", email: "Zoe@Example.com", name: "Zoe",
        picture: "https://example.com/zoe.png")
      let response = try await Self.exchange(h, token)
      #expect(response.localId == "fb-new-g" && !response.isAnonymous && response.isNewUser)
      #expect(response.signInProvider == "google.com")
      #expect(response.account?.email == "zoe@example.com" && response.account?.emailVerified == true)
      #expect(response.account?.displayName == "Zoe")
      let photo = try await h.store.read { db in
        try AccountsRepository.get(db, projectID: LinkingHarness.projectID, localID: "fb-new-g")?.photoURL
      }
      #expect(photo == "https://example.com/zoe.png")
      #expect(try await h.signUpsCounted("google.com") == 1)

      // Another uid with an email some account already has: EMAIL_EXISTS, nothing made.
      try await h.expectRefusedUnchanged("fb-other", .emailExists) {
        try await Self.exchange(
          h,
          try firebase.token(
            uid: "fb-other", now: h.nowSeconds, provider: "password", email: "zoe@example.com"))
      }
      // The EMAIL_EXISTS answer kept its place in the sign-up quota, as a sign-up would.
      let counted = try await h.store.read { db in
        try db.queryOne(
          "SELECT coalesce(sum(count), 0) FROM sign_up_buckets WHERE project_id = ?",
          [.text(LinkingHarness.projectID)]
        ).map { try $0.int64(0) } ?? 0
      }
      #expect(counted == 2)
    }
  }

  @Test func aDisabledAccountIsRefused() async throws {
    let firebase = try FakeFirebase()
    try await LinkingHarness.with { h in
      try await Self.configure(h, firebase, create: true)
      try await Self.imported(h, uid: "fb-off", anonymous: true)
      try await h.change("fb-off") { $0.disabled = true }
      try await h.expectRefusedUnchanged("fb-off", .userDisabled) {
        try await Self.exchange(h, try firebase.token(uid: "fb-off", now: h.nowSeconds))
      }
    }
  }

  @Test func offUntilAFirebaseProjectIsConfigured() async throws {
    let firebase = try FakeFirebase()
    try await LinkingHarness.with { h in
      let token = try firebase.token(uid: "fb-1", now: h.nowSeconds)
      await expectLinkError(.operationNotAllowed) { try await Self.exchange(h, token) }
      try await Self.configure(h, firebase, create: true)
      #expect(try await Self.exchange(h, token).localId == "fb-1")
      try await h.updateConfig({ $0.firebaseProjectId = "" }, mask: ["firebase_project_id"])
      await expectLinkError(.operationNotAllowed) { try await Self.exchange(h, token) }
    }
  }

  @Test func badTokensAreRefusedAndThrottledPerIP() async throws {
    let firebase = try FakeFirebase()
    try await LinkingHarness.with { h in
      try await Self.configure(h, firebase, create: true)
      // Another Firebase project's token, a forged one, garbage.
      var other = firebase.claims(uid: "fb-x", now: h.nowSeconds, project: "other-project")
      await expectLinkError(.invalidIdpResponse) { try await Self.exchange(h, try firebase.sign(other)) }
      other = firebase.claims(uid: "fb-x", now: h.nowSeconds)
      await expectLinkError(.invalidIdpResponse) {
        try await Self.exchange(h, try firebase.sign(other, forged: true))
      }
      #expect(try await h.snapshot("fb-x").account == nil)
      for _ in 0..<28 {
        await expectLinkError(.invalidIdpResponse) { try await Self.exchange(h, "garbage") }
      }
      // 30 failures from one IP: the next attempt is refused before verification.
      let refused = await expectLinkError(.tooManyAttempts) {
        try await Self.exchange(h, try firebase.token(uid: "fb-x", now: h.nowSeconds))
      }
      #expect(refused?.details["retry_after_seconds"] != nil)
      #expect(
        try await Self.exchange(h, try firebase.token(uid: "fb-x", now: h.nowSeconds), ip: "203.0.113.9")
          .isNewUser)
    }
  }

  @Test func certificatesFetchedThroughTheOutboundClient() async throws {
    let firebase = try FakeFirebase()
    try await LinkingHarness.with { h in
      let certs = firebase.certsJSON
      h.outbound.route(Self.certsURL) { _ in
        OutboundResponse(status: 200, body: Array(certs.utf8), freshnessSeconds: 3600)
      }
      try await Self.configure(h, firebase, create: true, inline: false)
      _ = try await Self.exchange(h, try firebase.token(uid: "fb-url-1", now: h.nowSeconds))
      _ = try await Self.exchange(h, try firebase.token(uid: "fb-url-2", now: h.nowSeconds))
      #expect(h.outbound.count(Self.certsURL) == 1)
    }
  }
}
