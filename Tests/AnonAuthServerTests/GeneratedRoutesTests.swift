import AnonAuthService
import AnonAuthWire
import Synchronization
import Testing

@testable import AnonAuthServer

/// The generated `register(in:)` of a handler protocol: it puts every rpc of the service
/// at its path, behind the credential Protos/ names for the service (none for Health, the
/// API key for the others), and hands each typed request to the handler's method.
@Suite struct GeneratedRoutesTests {
  struct Health: HealthServiceHandler {
    func check(_ request: CheckRequest, context: CallContext) -> CheckResponse {
      CheckResponse(status: "SERVING")
    }
  }

  struct Tokens: TokenServiceHandler {
    func verifyIdToken(_ request: VerifyIdTokenRequest, context: CallContext) -> VerifyIdTokenResponse {
      VerifyIdTokenResponse(uid: "uid-of-" + request.idToken)
    }

    func getPublicKeys(_ request: GetPublicKeysRequest, context: CallContext) -> GetPublicKeysResponse {
      GetPublicKeysResponse()
    }
  }

  final class Seen: Sendable {
    let checks = Atomic<Int>(0)
    let credentials = Mutex<[CallCredential]>([])
  }

  static func router(_ seen: Seen) -> Router {
    var router = Router()
    Health().register(in: &router)
    Tokens().register(in: &router) { _ throws(RPCError) in seen.checks.add(1, ordering: .relaxed) }
    return router
  }

  static func context(_ path: String, _ seen: Seen) -> CallContext {
    CallContext(
      method: path, metadata: [:], peerIP: "192.0.2.1", requestID: "r",
      authenticated: { credential in seen.credentials.withLock { $0.append(credential) } })
  }

  @Test func everyMethodOfTheProtosIsRegisteredAtItsPath() {
    let router = Self.router(Seen())
    #expect(router.methods == (HealthServiceMethods.paths + TokenServiceMethods.paths).sorted())
    #expect(TokenServiceMethods.verifyIdToken.path == "/anonauth.v1.TokenService/VerifyIdToken")
  }

  @Test func healthNeedsNoCredential() async throws {
    let seen = Seen()
    let router = Self.router(seen)
    let payload = try await router.handle(
      Self.context(HealthServiceMethods.check.path, seen), payload: CheckRequest().serializedBytes())
    #expect(try CheckResponse(serializedBytes: payload).status == "SERVING")
    #expect(seen.checks.load(ordering: .relaxed) == 0)
    #expect(seen.credentials.withLock { $0 }.isEmpty)
  }

  @Test func tokenServiceChecksTheAPIKeyThenDecodesForItsHandler() async throws {
    let seen = Seen()
    let router = Self.router(seen)
    let payload = try await router.handle(
      Self.context(TokenServiceMethods.verifyIdToken.path, seen),
      payload: VerifyIdTokenRequest(idToken: "t").serializedBytes())
    #expect(try VerifyIdTokenResponse(serializedBytes: payload).uid == "uid-of-t")
    #expect(seen.checks.load(ordering: .relaxed) == 1)
    #expect(seen.credentials.withLock { $0 } == [.apiKey])
  }
}
