import AnonAuthService
import AnonAuthStore
import AnonAuthWire
import Testing

/// CreateAccount, UpdateAccount and LookupAccounts: what Firebase's Admin SDK does with
/// `create_user`, `update_user` (and the claims and revocation it sends the same way) and
/// `get_user` / `get_users`.
@Suite("AdminService: accounts made, changed and looked up by an administrator")
struct AdminAccountEditTests {
  private static func adminContext(_ h: LinkingHarness, _ method: String) -> CallContext {
    CallContext(
      method: "/\(AdminService.name)/\(method)", metadata: ["authorization": "Bearer \(h.adminKey)"],
      peerIP: LinkingHarness.peer, requestID: "test")
  }

  private static func create(_ h: LinkingHarness, _ change: (inout CreateAccountRequest) -> Void)
    async throws(RPCError) -> AccountInfo
  {
    var request = CreateAccountRequest()
    request.projectId = LinkingHarness.projectID
    change(&request)
    return try await h.admin.createAccount(request, context: adminContext(h, "CreateAccount"))
  }

  private static func update(
    _ h: LinkingHarness, _ localID: String, _ change: (inout UpdateAccountRequest) -> Void
  )
    async throws(RPCError) -> AccountInfo
  {
    var request = UpdateAccountRequest()
    request.projectId = LinkingHarness.projectID
    request.localId = localID
    change(&request)
    return try await h.admin.updateAccount(request, context: adminContext(h, "UpdateAccount"))
  }

  @Test("CreateAccount keeps the uid given, signs in with its password, and refuses a taken uid or email")
  func createWithPassword() async throws {
    try await LinkingHarness.with { h in
      let made = try await Self.create(h) {
        $0.localId = "admin-made-1"
        $0.email = "Carol@Example.com"
        $0.password = "secret-1"
        $0.displayName = "Carol"
        $0.photoUrl = "https://example.com/c.png"
        $0.emailVerified = true
      }
      #expect(made.localId == "admin-made-1")
      #expect(!made.isAnonymous && made.email == "carol@example.com" && made.emailVerified)
      #expect(made.providers.map(\.providerId) == ["password"])
      #expect(try await h.account("admin-made-1").photoURL == "https://example.com/c.png")
      let signedIn = try await h.signIn(email: "carol@example.com", password: "secret-1")
      #expect(signedIn.localId == "admin-made-1")
      await expectRPCError(.uidExists) { () async throws(RPCError) in
        try await Self.create(h) { $0.localId = "admin-made-1" }
      }
      await expectRPCError(.emailExists) { () async throws(RPCError) in
        try await Self.create(h) { $0.email = "carol@example.com" }
      }
      await expectRPCError(.invalidArgument) { () async throws(RPCError) in
        try await Self.create(h) { $0.password = "secret-1" }
      }
      await expectRPCError(.invalidArgument) { () async throws(RPCError) in
        try await Self.create(h) { $0.localId = String(repeating: "u", count: 129) }
      }
      await expectRPCError(.weakPassword) { () async throws(RPCError) in
        try await Self.create(h) {
          $0.email = "dan@example.com"
          $0.password = "123"
        }
      }
    }
  }

  @Test("CreateAccount with nothing makes an anonymous account with a fresh uid; disabled is kept")
  func createBare() async throws {
    try await LinkingHarness.with { h in
      let made = try await Self.create(h) { $0.disabled = true }
      #expect(made.localId.count == 28 && made.isAnonymous && made.disabled && made.providers.isEmpty)
    }
  }

  @Test("UpdateAccount: email and password make an anonymous account permanent and end its sessions")
  func updateCredentials() async throws {
    try await LinkingHarness.with { h in
      let anonymous = try await h.anonymous()
      let info = try await Self.update(h, anonymous.localId) {
        $0.updateMask = ["email", "password"]
        $0.email = "erin@example.com"
        $0.password = "secret-2"
      }
      #expect(!info.isAnonymous && info.email == "erin@example.com")
      #expect(info.providers.map(\.rawId) == ["erin@example.com"])
      #expect(try await h.account(anonymous.localId).scheduledDeletionAtMs == 0)
      await expectRPCError(.invalidRefreshToken) { () async throws(RPCError) in
        try await h.refresh(anonymous.refreshToken)
      }
      let signedIn = try await h.signIn(email: "erin@example.com", password: "secret-2")
      #expect(signedIn.localId == anonymous.localId)
      // A new email moves the password identity with it.
      let moved = try await Self.update(h, anonymous.localId) {
        $0.updateMask = ["email"]
        $0.email = "erin2@example.com"
      }
      #expect(moved.providers.map(\.rawId) == ["erin2@example.com"])
      #expect(
        try await h.signIn(email: "erin2@example.com", password: "secret-2").localId == anonymous.localId)
      let other = try await h.signUp(email: "frank@example.com", password: "secret-3")
      await expectRPCError(.emailExists) { () async throws(RPCError) in
        try await Self.update(h, other.localId) {
          $0.updateMask = ["email"]
          $0.email = "erin2@example.com"
        }
      }
    }
  }

  @Test(
    "UpdateAccount changes only the masked fields; valid_since revokes; unknown names and uids are refused")
  func updateFields() async throws {
    try await LinkingHarness.with { h in
      let user = try await h.signUp(email: "gina@example.com", password: "secret-1")
      let info = try await Self.update(h, user.localId) {
        $0.updateMask = ["display_name", "photo_url", "email_verified", "custom_claims_json", "disabled"]
        $0.displayName = "Gina"
        $0.photoUrl = "https://example.com/g.png"
        $0.emailVerified = true
        $0.customClaimsJson = #"{"role":"admin"}"#
        $0.email = "ignored@example.com"
      }
      #expect(info.displayName == "Gina" && info.emailVerified && !info.disabled)
      #expect(info.email == "gina@example.com")
      #expect(info.customClaimsJson == #"{"role":"admin"}"#)
      #expect(try await h.account(user.localId).photoURL == "https://example.com/g.png")

      let later = h.nowSeconds + 1
      let revoked = try await Self.update(h, user.localId) {
        $0.updateMask = ["valid_since"]
        $0.validSince = later
      }
      #expect(revoked.validSince == later)
      await expectRPCError(.invalidRefreshToken) { () async throws(RPCError) in
        try await h.refresh(user.refreshToken)
      }

      let unlinked = try await Self.update(h, user.localId) {
        $0.updateMask = ["delete_providers"]
        $0.deleteProviders = ["password", "phone"]
      }
      #expect(unlinked.providers.isEmpty && unlinked.email.isEmpty && !unlinked.isAnonymous)

      await expectRPCError(.invalidArgument) { () async throws(RPCError) in
        try await Self.update(h, user.localId) { $0.updateMask = ["local_id"] }
      }
      await expectRPCError(.invalidArgument) { () async throws(RPCError) in
        try await Self.update(h, user.localId) { $0.updateMask = [] }
      }
      await expectRPCError(.forbiddenClaim) { () async throws(RPCError) in
        try await Self.update(h, user.localId) {
          $0.updateMask = ["custom_claims_json"]
          $0.customClaimsJson = #"{"sub":"x"}"#
        }
      }
      await expectRPCError(.userNotFound) { () async throws(RPCError) in
        try await Self.update(h, "no-such-uid") { $0.updateMask = ["disabled"] }
      }
    }
  }

  @Test("LookupAccounts finds by uid and email, each account once, leaves the unknown out, at most 100")
  func lookup() async throws {
    try await LinkingHarness.with { h in
      let ann = try await h.signUp(email: "ann@example.com", password: "secret-1")
      let anonymous = try await h.anonymous()
      var request = LookupAccountsRequest()
      request.projectId = LinkingHarness.projectID
      request.localIds = [anonymous.localId, "missing", ann.localId]
      request.emails = ["ANN@example.com", "nobody@example.com", "not an email"]
      let found = try await h.admin.lookupAccounts(request, context: Self.adminContext(h, "LookupAccounts"))
      #expect(found.accounts.map(\.localId) == [anonymous.localId, ann.localId])
      #expect(found.photoUrls == ["", ""])
      request.localIds = Array(repeating: "x", count: 101)
      request.emails = []
      await expectRPCError(.invalidArgument) { () async throws(RPCError) in
        try await h.admin.lookupAccounts(request, context: Self.adminContext(h, "LookupAccounts"))
      }
    }
  }
}
