import AnonAuthService
import AnonAuthWire
import Synchronization
import Testing

@testable import AnonAuthServer

/// The router's typed entry (`Router.call`), the one the JSON API uses: the handler gets
/// the request the transport built and the transport gets the handler's response, with
/// no encoding or decoding between them, after the same checks in the same order as a
/// byte transport's call (`Router.handle`), and a batch over the decode bounds is refused
/// as its encoding would be.
@Suite struct RouterTypedCallTests {
  /// Counts its encodings and keeps the identity of what it was built with, which a
  /// round trip through bytes loses.
  final class Probe: Sendable {
    let encodings = Atomic<Int>(0)
  }

  struct Traced: ProtoMessage {
    static let protoMessageName = "anonauth.test.Traced"
    var unknownFields: [ProtoUnknownField] = []
    var probe: Probe?

    init() {}
    init(_ probe: Probe) { self.probe = probe }
    init(serializedBytes bytes: [UInt8]) throws(ProtoDecodingError) {}

    func serializedBytes() -> [UInt8] {
      probe?.encodings.add(1, ordering: .relaxed)
      return []
    }

    static func == (a: Traced, b: Traced) -> Bool { a.probe === b.probe }
  }

  final class Seen: Sendable {
    let handled = Atomic<Int>(0)
    let checks = Atomic<Int>(0)
    let credentials = Mutex<[CallCredential]>([])
  }

  static let traced = MethodDescriptor<Traced, Traced>(AccountServiceMethods.serviceName, "Traced")

  static func router(_ seen: Seen, refuse: Bool = false) -> Router {
    var router = Router()
    let check: Router.Authenticator = { _ throws(RPCError) in
      seen.checks.add(1, ordering: .relaxed)
      if refuse { throw RPCError(.apiKeyInvalid, "refused") }
    }
    router.unary(traced, credential: (.apiKey, check)) { request, _ throws(RPCError) in
      seen.handled.add(1, ordering: .relaxed)
      return request  // the same probe back
    }
    router.unary(AdminServiceMethods.deleteAccounts, credential: (.adminKey, check)) {
      _, _ throws(RPCError) in
      seen.handled.add(1, ordering: .relaxed)
      return DeleteAccountsResponse()
    }
    return router
  }

  static func context(_ path: String, _ seen: Seen) -> CallContext {
    CallContext(
      method: path, metadata: [:], peerIP: "192.0.2.1", requestID: "r",
      authenticated: { credential in seen.credentials.withLock { $0.append(credential) } })
  }

  @Test func theHandlerGetsTheRequestAsBuiltAndTheCallerItsResponse() async throws {
    let seen = Seen()
    let probe = Probe()
    let response = try await Self.router(seen).call(
      Self.traced, Traced(probe), context: Self.context(Self.traced.path, seen))
    #expect(response.probe === probe)
    #expect(probe.encodings.load(ordering: .relaxed) == 0)
    #expect(seen.checks.load(ordering: .relaxed) == 1)
    #expect(seen.credentials.withLock { $0 } == [.apiKey])
  }

  @Test func theBytePathDecodesAndEncodesTheSameHandler() async throws {
    let seen = Seen()
    let payload = try await Self.router(seen).handle(Self.context(Self.traced.path, seen), payload: [])
    #expect(payload == [])
    #expect(seen.handled.load(ordering: .relaxed) == 1)
    #expect(seen.credentials.withLock { $0 } == [.apiKey])
  }

  @Test func aRefusedCredentialNeverReachesTheHandler() async {
    let seen = Seen()
    let router = Self.router(seen, refuse: true)
    await #expect(throws: RPCError(.apiKeyInvalid, "refused")) {
      try await router.call(Self.traced, Traced(Probe()), context: Self.context(Self.traced.path, seen))
    }
    #expect(seen.handled.load(ordering: .relaxed) == 0)
    #expect(seen.credentials.withLock { $0 }.isEmpty)
  }

  @Test func anUnknownMethodIsUnknownOnBothPaths() async {
    let seen = Seen()
    let router = Self.router(seen)
    let missing = MethodDescriptor<Traced, Traced>(AccountServiceMethods.serviceName, "Missing")
    let typed = await #expect(throws: RPCError.self) {
      try await router.call(missing, Traced(), context: Self.context(missing.path, seen))
    }
    let bytes = await #expect(throws: RPCError.self) {
      try await router.handle(Self.context(missing.path, seen), payload: [])
    }
    #expect(typed?.reason == "UNKNOWN_METHOD")
    #expect(typed == bytes)
    #expect(seen.checks.load(ordering: .relaxed) == 0)
  }

  @Test func aCancelledCallIsNotHandled() async {
    let seen = Seen()
    let router = Self.router(seen)
    let task = Task { () async throws(RPCError) -> Traced in
      withUnsafeCurrentTask { $0?.cancel() }
      return try await router.call(Self.traced, Traced(), context: Self.context(Self.traced.path, seen))
    }
    let result = await task.result
    guard case .failure(let error) = result else {
      Issue.record("a cancelled call was answered")
      return
    }
    #expect((error as? RPCError)?.reason == "DEADLINE_EXCEEDED")
    #expect(seen.handled.load(ordering: .relaxed) == 0)
  }

  /// 2 per string: past `CallLimits.maxDecodeCost` with half as many uids and one more.
  @Test func aBatchOverTheDecodeBoundsIsMalformedOnBothPaths() async {
    let seen = Seen()
    let router = Self.router(seen)
    let request = DeleteAccountsRequest(
      projectId: "p", localIds: Array(repeating: "u", count: CallLimits.maxDecodeCost / 2 + 1))
    #expect(!request.isWithinDecodeBounds)
    let path = AdminServiceMethods.deleteAccounts.path
    let typed = await #expect(throws: RPCError.self) {
      try await router.call(AdminServiceMethods.deleteAccounts, request, context: Self.context(path, seen))
    }
    let bytes = await #expect(throws: RPCError.self) {
      try await router.handle(Self.context(path, seen), payload: request.serializedBytes())
    }
    #expect(typed?.reason == "MALFORMED_REQUEST")
    #expect(typed == bytes)
    #expect(seen.handled.load(ordering: .relaxed) == 0)
    // The credential was checked first, as for bytes.
    #expect(seen.credentials.withLock { $0 } == [.adminKey, .adminKey])
  }

  @Test func aBatchWithinTheBoundsIsHandled() async throws {
    let seen = Seen()
    let request = DeleteAccountsRequest(projectId: "p", localIds: ["a", "b"])
    #expect(request.isWithinDecodeBounds)
    _ = try await Self.router(seen).call(
      AdminServiceMethods.deleteAccounts, request,
      context: Self.context(AdminServiceMethods.deleteAccounts.path, seen))
    #expect(seen.handled.load(ordering: .relaxed) == 1)
  }
}
