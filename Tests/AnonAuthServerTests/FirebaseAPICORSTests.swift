import AnonAuthCrypto
import AnonAuthService
import AnonAuthWire
import Testing

@testable import AnonAuthServer

/// CORS: none by default; the origins of the API key's project get preflights and the
/// header on answers.
@Suite struct FirebaseAPICORSTests {
  static let origin = "https://app.example.com"

  static func preflight(_ h: FirebaseAPIHarness, origin: String, path: String = "/v1/accounts:signUp") async
    -> FirebaseAPIHarness.Answer
  {
    await h.send(path, method: "OPTIONS", body: [], headers: [("origin", origin)])
  }

  @Test func noOriginIsAllowedByDefault() async throws {
    try await FirebaseAPIHarness.with { h in
      let answer = await Self.preflight(h, origin: Self.origin)
      #expect(answer.status == 403 && answer.header("access-control-allow-origin") == nil)
      let signUp = await h.send("/v1/accounts:signUp", body: [], headers: [("origin", Self.origin)])
      #expect(signUp.status == 200 && signUp.header("access-control-allow-origin") == nil)
      #expect(signUp.header("vary") == "Origin")
    }
  }

  @Test func theProjectsOriginsArePreflightedAndAnswered() async throws {
    try await FirebaseAPIHarness.with { h in
      var config = ProjectConfig()
      config.projectId = FirebaseAPIHarness.projectID
      config.corsOrigins = [Self.origin]
      _ = try await h.router.handle(
        CallContext(
          method: AdminServiceMethods.updateProjectConfig.path,
          metadata: ["authorization": "Bearer \(h.adminKey)"], peerIP: "127.0.0.1", requestID: "r"),
        payload: UpdateProjectConfigRequest(config: config, updateMask: ["cors_origins"]).serializedBytes())
      let answer = await Self.preflight(h, origin: Self.origin)
      #expect(answer.status == 204)
      #expect(answer.header("access-control-allow-origin") == Self.origin)
      #expect(answer.header("access-control-allow-methods") == "POST, OPTIONS")
      #expect(answer.header("access-control-max-age") == "3600")
      #expect(answer.header("access-control-allow-headers")?.contains("x-client-version") == true)
      let error = await h.send("/v1/accounts:lookup", body: [], headers: [("origin", Self.origin)])
      #expect(error.status == 400 && error.header("access-control-allow-origin") == Self.origin)
      #expect(await Self.preflight(h, origin: "https://other.example.com").status == 403)
      #expect(await Self.preflight(h, origin: Self.origin, path: "/v1/elsewhere").status == 404)
      #expect(h.callRecords.count == 1)
    }
  }

  @Test func originsAreCheckedWhenSet() {
    #expect(CORSOrigin.isOrigin("https://app.example.com"))
    #expect(CORSOrigin.isOrigin("http://localhost:5173"))
    #expect(!CORSOrigin.isOrigin("https://app.example.com/"))
    #expect(!CORSOrigin.isOrigin("*"))
    #expect(!CORSOrigin.isOrigin("ftp://x"))
    #expect(!CORSOrigin.isOrigin("https://"))
  }
}
