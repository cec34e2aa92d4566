import AnonAuthCrypto
import AnonAuthWire
import Testing

@testable import AnonAuthService

/// Facebook access tokens checked through a fake Graph API.
@Suite struct FacebookVerifierTests {
  static let now: Int64 = 1_800_000_000
  let outbound = FakeOutbound()
  let graph = FakeGraphAPI(appID: "app-1", appSecret: "s3cret")
  let verifier: FacebookVerifier

  init() {
    graph.install(on: outbound)
    verifier = FacebookVerifier(
      config: IdpConfig(
        providerId: "facebook.com", enabled: true, clientId: "app-1", clientSecret: "s3cret",
        apiBaseUrl: FakeGraphAPI.base + "/"),
      outbound: outbound)
  }

  func verify(_ token: String) async throws(RPCError) -> VerifiedIdentity {
    try await verifier.verify(accessToken: token, nowSeconds: Self.now)
  }

  @Test func goodToken() async throws {
    graph.add(
      "tok+/=", .init(userID: "1001", appID: "app-1", expiresAt: Self.now + 60, email: "Fb@Example.com"))
    let identity = try await verify("tok+/=")
    #expect(identity.providerID == "facebook.com" && identity.rawID == "1001")
    #expect(identity.email == "fb@example.com" && !identity.emailVerified)
    #expect(identity.displayName == "Facebook User")
    #expect(graph.badProofs.load(ordering: .relaxed) == 0)
    // The token was escaped in the query, and the app token is id|secret.
    #expect(outbound.urls.first?.contains("input_token=tok%2B%2F%3D") == true)
    #expect(outbound.urls.first?.contains("access_token=app-1%7Cs3cret") == true)
    graph.add("forever", .init(userID: "1002", appID: "app-1", expiresAt: 0))
    #expect(try await verify("forever").rawID == "1002")
  }

  @Test func refusals() async throws {
    graph.add("tok-A1", .init(userID: "1", appID: "app-1", isValid: false))
    graph.add("tok-B2", .init(userID: "1", appID: "app-2"))
    graph.add("tok-C3", .init(userID: "1", appID: "app-1", expiresAt: Self.now - 1))
    for token in ["tok-A1", "tok-B2", "tok-C3", "tok-D4", "", String(repeating: "t", count: 5000)] {
      let error = await expectLinkError(.invalidIdpResponse) { try await verify(token) }
      // Neither the token nor the app secret reaches the message (which may be logged).
      #expect(error?.message.contains(token) != true || token.isEmpty)
      #expect(error?.message.contains("s3cret") == false)
    }
  }

  @Test func controlCharactersFromTheGraphAPIAreRefused() async throws {
    // ImportAccounts would refuse such an account: refused here instead, so that an
    // export of every account the service made imports again.
    graph.add("t-name", .init(userID: "1", appID: "app-1", name: "Fay\u{0}"))
    graph.add("t-mail", .init(userID: "1", appID: "app-1", email: "fay@example.com\u{7}"))
    graph.add("t-id", .init(userID: "1\u{0}", appID: "app-1"))
    for token in ["t-name", "t-mail", "t-id"] {
      await expectLinkError(.invalidIdpResponse) { try await verify(token) }
    }
  }

  @Test func meDisagreeingWithDebugTokenIsRefused() async throws {
    outbound.route(FakeGraphAPI.base + "/me?") { _ in
      OutboundResponse(status: 200, body: Array("{\"id\":\"2\"}".utf8))
    }
    graph.add("t", .init(userID: "1", appID: "app-1"))
    await expectLinkError(.invalidIdpResponse) { try await verify("t") }
  }

  @Test func networkAndConfigProblems() async throws {
    let offline = FacebookVerifier(
      config: IdpConfig(providerId: "facebook.com", enabled: true, clientId: "app-1", clientSecret: "s"),
      outbound: FakeOutbound())
    await expectLinkError(.invalidIdpResponse) {
      try await offline.verify(accessToken: "t", nowSeconds: Self.now)
    }
    let noSecret = FacebookVerifier(
      config: IdpConfig(providerId: "facebook.com", enabled: true, clientId: "app-1"), outbound: outbound)
    await expectLinkError(.operationNotAllowed) {
      try await noSecret.verify(accessToken: "t", nowSeconds: Self.now)
    }
    outbound.route(FakeGraphAPI.base + "/debug_token?") { _ in OutboundResponse(status: 500, body: []) }
    await expectLinkError(.invalidIdpResponse) { try await verify("t") }
  }
}
