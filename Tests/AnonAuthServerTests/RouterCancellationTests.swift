import AnonAuthService
import AnonAuthWire
import Synchronization
import Testing

@testable import AnonAuthServer

/// The router's part of real cancellation and of the frame limit: a call cancelled (its
/// deadline passed, its connection closed) is never decoded nor handled, whether it was
/// cancelled before it began or while its credential was checked; and it reports which
/// credential passed, so the transport raises the frame limit only for the admin key.
@Suite struct RouterCancellationTests {
  final class Counter: Sendable {
    let value = Atomic<Int>(0)
    func add() { value.add(1, ordering: .relaxed) }
    var count: Int { value.load(ordering: .relaxed) }
  }

  final class Credentials: Sendable {
    let seen = Mutex<[CallCredential]>([])
  }

  static func router(handled: Counter, cancelWhileAuthenticating: Bool = false) -> Router {
    var router = Router()
    let check: Router.Authenticator = { _ throws(RPCError) in
      if cancelWhileAuthenticating { withUnsafeCurrentTask { $0?.cancel() } }
    }
    router.unary(HealthService.name, "Check") { (_: CheckRequest, _) in
      handled.add()
      return CheckResponse()
    }
    router.unary(AccountService.name, "Probe", authenticate: check) { (_: CheckRequest, _) in
      handled.add()
      return CheckResponse()
    }
    router.unary(AdminService.name, "Probe", authenticate: check) { (_: CheckRequest, _) in
      handled.add()
      return CheckResponse()
    }
    return router
  }

  static func context(_ method: String, credentials: Credentials? = nil) -> CallContext {
    CallContext(
      method: method, metadata: [:], peerIP: "192.0.2.1", requestID: "r",
      authenticated: { credential in credentials?.seen.withLock { $0.append(credential) } })
  }

  @Test(arguments: ["/anonauth.v1.HealthService/Check", "/anonauth.v1.AccountService/Probe"])
  func aCallCancelledBeforeItBeginsIsNeitherDecodedNorHandled(method: String) async {
    let handled = Counter()
    let router = Self.router(handled: handled)
    let task = Task { () async throws(RPCError) -> [UInt8] in
      withUnsafeCurrentTask { $0?.cancel() }
      // Bytes that do not parse: a decode would answer MALFORMED_REQUEST instead.
      return try await router.handle(Self.context(method), payload: [0xff, 0xff])
    }
    let result = await task.result
    #expect((result.error as? RPCError)?.reason == "DEADLINE_EXCEEDED")
    #expect(handled.count == 0)
  }

  @Test func aCallCancelledWhileItsCredentialIsCheckedIsNotHandled() async {
    let handled = Counter()
    let router = Self.router(handled: handled, cancelWhileAuthenticating: true)
    let task = Task { () async throws(RPCError) -> [UInt8] in
      try await router.handle(Self.context("/anonauth.v1.AccountService/Probe"), payload: [])
    }
    let result = await task.result
    #expect((result.error as? RPCError)?.reason == "DEADLINE_EXCEEDED")
    #expect(handled.count == 0)
  }

  @Test func theCredentialThatPassedIsReportedAndHealthReportsNone() async throws {
    let handled = Counter()
    let router = Self.router(handled: handled)
    let credentials = Credentials()
    for method in [
      "/anonauth.v1.HealthService/Check", "/anonauth.v1.AccountService/Probe",
      "/anonauth.v1.AdminService/Probe",
    ] {
      _ = try await router.handle(Self.context(method, credentials: credentials), payload: [])
    }
    #expect(handled.count == 3)
    #expect(credentials.seen.withLock { $0 } == [.apiKey, .adminKey])
  }
}

extension Result {
  fileprivate var error: Failure? {
    if case .failure(let error) = self { return error }
    return nil
  }
}
