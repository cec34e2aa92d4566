import AnonAuthRPCClient
import AnonAuthTestSupport
import AnonAuthWire
import Foundation
import Testing

/// The Swift gRPC client against the real daemon over HTTP/2 (ALPN h2): many calls in
/// flight as streams of one connection, each answered and matched to its caller, and
/// gRPC's trailers read back into `RPCError`.
@Suite(.serialized) struct GRPCClientTests {
  @Test func manyConcurrentCallsShareOneConnectionAndAnUnknownMethodIsUnimplemented() async throws {
    let daemon = try await DaemonProcess.start()
    let client = try GRPCClient(endpoint: ClientEndpoint(address: daemon.rpc, caFile: daemon.caFile))
    defer { client.close() }
    let outcomes = await withTaskGroup(of: RPCError?.self) { group in
      for i in 0..<40 {
        group.addTask {
          do throws(RPCError) {
            _ = try await client.callRaw("/anonauth.v1.NoSuchService/Call\(i)", payload: [])
            return nil
          } catch {
            return error
          }
        }
      }
      return await group.reduce(into: [RPCError?]()) { $0.append($1) }
    }
    #expect(outcomes.count == 40)
    for outcome in outcomes {
      #expect(outcome?.code == .unimplemented, "\(String(describing: outcome))")
    }
    let metrics = try await OpsHTTP.get(daemon.ops, "/metrics").body
    let open = metrics.split(separator: "\n").first { $0.hasPrefix("anonauth_connections_open ") }
    #expect(open == "anonauth_connections_open 1", "one HTTP/2 connection carried every call")
  }

  /// `post` sends a plain HTTP/2 request on the same connection (the bench's JSON API
  /// over `h2`): a sign-up's JSON comes back from a 200, another status is its reason.
  @Test func aPlainPostReachesTheJSONAPIOverTheSameConnection() async throws {
    let daemon = try await DaemonProcess.start()
    let client = try GRPCClient(endpoint: ClientEndpoint(address: daemon.rpc, caFile: daemon.caFile))
    defer { client.close() }
    let body = try await client.post(
      path: "/v1/accounts:signUp?key=\(daemon.apiKey)", headers: [("content-type", "application/json")],
      body: Array(#"{"returnSecureToken":true}"#.utf8))
    let object = try #require(try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])
    #expect((object["localId"] as? String)?.count == 28)
    await #expect(throws: RPCError.self) {
      do throws(RPCError) {
        _ = try await client.post(path: "/v1/no-such-call", headers: [], body: [])
      } catch {
        #expect(error.reason == "HTTP_404")
        throw error
      }
    }
  }

  @Test func theGeneratedStubsCallOverGRPCAndErrorsKeepTheirReason() async throws {
    let daemon = try await DaemonProcess.start()
    let grpc = try GRPCClient(endpoint: ClientEndpoint(address: daemon.rpc, caFile: daemon.caFile))
    defer { grpc.close() }
    let health = try await HealthServiceClient(grpc).check(CheckRequest())
    #expect(health.status == "SERVING")

    var signUp = SignUpRequest()
    signUp.kind = .anonymous(AnonymousSignUp())
    let accounts = AccountServiceClient(grpc)
    let made = try await accounts.signUp(signUp, metadata: ["x-api-key": daemon.apiKey])
    #expect(made.localId.count == 28)

    // The same token verified over gRPC and natively gives the same answer.
    var verify = VerifyIdTokenRequest()
    verify.idToken = made.idToken
    let overGRPC = try await TokenServiceClient(grpc).verifyIdToken(
      verify, metadata: ["x-api-key": daemon.apiKey])
    let native = try await TokenServiceClient(try daemon.client()).verifyIdToken(
      verify, metadata: ["x-api-key": daemon.apiKey])
    #expect(overGRPC.uid == made.localId)
    #expect(overGRPC == native)

    // The reason travels in grpc-status-details-bin, as the native Status carries it.
    let error = await #expect(throws: RPCError.self) {
      _ = try await accounts.signUp(signUp, metadata: ["x-api-key": "nope"])
    }
    #expect(error?.code == .unauthenticated)
    #expect(error?.reason == "API_KEY_INVALID")
  }
}
