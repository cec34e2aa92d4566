import AnonAuthRPCClient
import AnonAuthWire
import Foundation
import Testing

/// Accounts and tokens end to end: the client library against the real daemon over TLS.
@Suite(.serialized) struct AccountFlowTests {
  @Test func anonymousSignInTokenRefreshVerifyDelete() async throws {
    let daemon = try await DaemonProcess.start()
    let client = try daemon.client()
    let auth = Auth(client: client, apiKey: daemon.apiKey)
    let user = try await auth.signInAnonymously()
    #expect(user.isAnonymous)
    #expect(user.uid.count == 28)
    // A second call returns the signed-in anonymous user, as the iOS SDK does.
    let again = try await auth.signInAnonymously()
    #expect(again.uid == user.uid)

    let token = try await user.getIDToken()
    // RS256 is deterministic: within the same second a refreshed token may equal the
    // first; what matters is that the refresh round trip worked and the token verifies.
    let refreshed = try await user.getIDToken(forceRefresh: true)
    #expect(refreshed.split(separator: ".").count == 3)
    #expect(token.split(separator: ".").count == 3)

    var verify = VerifyIdTokenRequest()
    verify.idToken = refreshed
    verify.checkRevoked = true
    let verified = try await client.call(
      "/anonauth.v1.TokenService/VerifyIdToken", verify, metadata: ["x-api-key": daemon.apiKey],
      as: VerifyIdTokenResponse.self)
    #expect(verified.uid == user.uid)
    #expect(verified.isAnonymous)
    #expect(verified.signInProvider == "anonymous")
    #expect(verified.projectId == "demo-project")

    let info = try await user.accountInfo()
    #expect(info.localId == user.uid)
    #expect(info.isAnonymous)
    #expect(info.providers.isEmpty)

    try await user.delete()
    #expect(auth.currentUser == nil)
    let error = await #expect(throws: RPCError.self) {
      _ = try await client.call(
        "/anonauth.v1.TokenService/VerifyIdToken", verify, metadata: ["x-api-key": daemon.apiKey],
        as: VerifyIdTokenResponse.self)
    }
    #expect(error?.reason == "USER_NOT_FOUND")
  }

  @Test func wrongAPIKeyIsRefusedBeforeThePayloadIsRead() async throws {
    let daemon = try await DaemonProcess.start()
    let client = try daemon.client()
    // A garbage payload with a bad key: the key is checked first (docs/protocol.md §6).
    let error = await #expect(throws: RPCError.self) {
      _ = try await client.callRaw(
        "/anonauth.v1.AccountService/SignUp", payload: [0xff, 0xff], metadata: ["x-api-key": "nope"])
    }
    #expect(error?.code == .unauthenticated)
    #expect(error?.reason == "API_KEY_INVALID")
  }

  @Test func restartKeepsAccountsKeysAndQuotaCounters() async throws {
    let first = try await DaemonProcess.start()
    let dataDir = first.dataDir
    defer { try? FileManager.default.removeItem(at: dataDir) }
    let apiKey = first.apiKey
    let adminKey = first.adminKey
    let admin = try first.client()
    var update = UpdateProjectConfigRequest()
    var config = ProjectConfig()
    config.projectId = "demo-project"
    config.signUpQuotaPerHour = 2
    update.config = config
    update.updateMask = ["sign_up_quota_per_hour"]
    _ = try await admin.call(
      "/anonauth.v1.AdminService/UpdateProjectConfig", update,
      metadata: ["authorization": "Bearer \(adminKey)"],
      as: ProjectConfig.self)

    let auth = Auth(client: try first.client(), apiKey: apiKey)
    let user = try await auth.signInAnonymously()
    let token = try await user.getIDToken()
    try auth.signOut()
    _ = try await auth.signInAnonymously()  // the second of two allowed sign-ups
    #expect(await first.terminated() == 0)

    let second = try await DaemonProcess.start(dataDir: dataDir)
    #expect(second.apiKey == apiKey)
    let client = try second.client()
    var verify = VerifyIdTokenRequest()
    verify.idToken = token
    verify.checkRevoked = true
    // The account and the signing key survived: the old token still verifies.
    let verified = try await client.call(
      "/anonauth.v1.TokenService/VerifyIdToken", verify, metadata: ["x-api-key": apiKey],
      as: VerifyIdTokenResponse.self)
    #expect(verified.uid == user.uid)
    // The quota window survived: a third sign-up within the hour is refused.
    let fresh = Auth(client: client, apiKey: apiKey)
    do {
      _ = try await fresh.signInAnonymously()
      Issue.record("a third sign-up within the hour was admitted after the restart")
    } catch {
      guard case .tooManyRequests(let seconds) = error else {
        Issue.record("expected too-many-requests, got \(error)")
        return
      }
      #expect((3500...3600).contains(seconds))
    }
  }
}
