import AnonAuthNet
import AnonAuthService
import AnonAuthWire
import Foundation
import Synchronization
import Testing

@testable import AnonAuthServer

/// The RPC core with no socket: calls through `InProcessTransport` reach the router
/// through `ConnectionCalls`, the path every transport takes, so the rules tested here
/// (unknown method, deadline and cancellation, request ids, the slot limit, drain, the
/// log line) hold for `anonauth/1`, HTTP/1.1 and HTTP/2 alike. Some of these were
/// daemon tests over TLS that needed the socket only to reach the router.
@Suite(.serialized, .timeLimit(.minutes(5))) struct InProcessCoreTests {
  static let check = "/anonauth.v1.HealthService/Check"
  static let hold = "/anonauth.v1.HealthService/Hold"

  /// What the handlers saw: how many `Hold` calls began, and were cancelled.
  final class Probe: Sendable {
    let started = AsyncStream<Void>.makeStream()
    /// How many `Hold` calls reached the handler (the router refuses a call whose
    /// deadline passed before its work began, and no handler runs).
    let began = Atomic<Int>(0)
    let cancelled = AsyncStream<Void>.makeStream()
    let release = Mutex(false)
  }

  /// Log lines, as the logger wrote them.
  final class Lines: Sendable {
    let lines = Mutex<[String]>([])
    func calls() -> [[String: Any]] {
      lines.withLock { $0 }.compactMap { line in
        guard let data = line.data(using: .utf8),
          let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
          object["msg"] as? String == "call"
        else { return nil }
        return object
      }
    }
  }

  struct Core {
    let core: ServerCore
    let loop: EventLoop
    let probe: Probe
    let lines: Lines

    func transport() -> InProcessTransport { InProcessTransport(core: core, loop: loop) }
  }

  /// `Check` answers SERVING; `Hold` waits (sleeping) until its task is cancelled.
  static func with(
    _ adjust: (inout RPCServerConfig) -> Void = { _ in }, _ body: (Core) async throws -> Void
  ) async throws {
    let probe = Probe()
    var router = Router()
    router.unary(HealthService.name, "Check") { (_: CheckRequest, _) in
      var response = CheckResponse()
      response.status = "SERVING"
      return response
    }
    router.unary(HealthService.name, "Hold") { (_: CheckRequest, _) in
      probe.began.add(1, ordering: .sequentiallyConsistent)
      probe.started.continuation.yield()
      try? await Task.sleep(for: .seconds(600))
      if Task.isCancelled { probe.cancelled.continuation.yield() }
      return CheckResponse()
    }
    var config = RPCServerConfig(listen: try SocketAddress(parsing: "127.0.0.1:0"))
    // A call with no deadline of its own must not expire on a machine so busy that the
    // test's tasks wait for a thread (the deadline tests set their own).
    config.defaultCallTimeoutMs = 600_000
    adjust(&config)
    let lines = Lines()
    let logger = Logger(minimum: .info, sink: { line in lines.lines.withLock { $0.append(line) } })
    let core = ServerCore(config: config, router: router, logger: logger, metrics: ServerMetrics())
    let loop = try EventLoop(name: "in-process-test")
    loop.start()
    defer { loop.stopAndWait() }
    try await body(Core(core: core, loop: loop, probe: probe, lines: lines))
  }

  static func first(_ stream: AsyncStream<Void>) async {
    for await _ in stream { return }
  }

  @Test func aCallReachesTheRouterThroughTheStubs() async throws {
    try await Self.with { core in
      let client = HealthServiceClient(core.transport())
      let response = try await client.check(CheckRequest(), metadata: [:], timeoutMs: nil)
      #expect(response.status == "SERVING")
    }
  }

  // Moved from the daemon's TransportTests: they needed the socket only to reach the router.
  @Test func unknownMethodIsUnimplemented() async throws {
    try await Self.with { core in
      let answer = await core.transport().call(
        "/anonauth.v1.NoSuchService/Nope", payload: [], metadata: [:], timeoutMs: 0)
      #expect(answer.error?.code == .unimplemented)
      #expect(answer.error?.reason == "UNKNOWN_METHOD")
    }
  }

  @Test func malformedPayloadIsInvalidArgumentAndTheNextCallIsServed() async throws {
    try await Self.with { core in
      let transport = core.transport()
      let answer = await transport.call(Self.check, payload: [0xff, 0xff, 0xff], metadata: [:], timeoutMs: 0)
      #expect(answer.error?.code == .invalidArgument)
      #expect(answer.error?.reason == "MALFORMED_REQUEST")
      let next = await transport.call(Self.check, payload: [], metadata: [:], timeoutMs: 0)
      let response = try CheckResponse(serializedBytes: next.result.get())
      #expect(response.status == "SERVING")
    }
  }

  @Test func requestIDIsEchoedCutOrMade() async throws {
    try await Self.with { core in
      let transport = core.transport()
      let given = await transport.call(
        Self.check, payload: [], metadata: ["x-request-id": "abc-123"], timeoutMs: 0)
      #expect(given.requestID == "abc-123")
      let made = await transport.call(Self.check, payload: [], metadata: [:], timeoutMs: 0)
      #expect(made.requestID.count == 16)
      let empty = await transport.call(Self.check, payload: [], metadata: ["x-request-id": ""], timeoutMs: 0)
      #expect(empty.requestID.count == 16)
      // Cut by Unicode scalars: "e" and a combining accent are two of the 128.
      let long = String(repeating: "e\u{301}", count: 100)
      let cut = await transport.call(Self.check, payload: [], metadata: ["x-request-id": long], timeoutMs: 0)
      #expect(cut.requestID.unicodeScalars.count == ConnectionCalls.maxRequestIDScalars)
    }
  }

  /// On a busy machine a deadline can pass before the call's task reaches the handler:
  /// the router then answers it unstarted (`DEADLINE_EXCEEDED` too) and there is no
  /// handler to cancel, so the call is made again until one ran (it hung here once,
  /// waiting for a cancellation no handler could see).
  @Test func callPastItsDeadlineGetsDeadlineExceededAndItsTaskIsCancelled() async throws {
    try await Self.with { core in
      let transport = core.transport()
      while true {
        let answer = await transport.call(Self.hold, payload: [], metadata: [:], timeoutMs: 100)
        #expect(answer.error?.code == .deadlineExceeded)
        #expect(answer.error?.reason == "DEADLINE_EXCEEDED")
        if core.probe.began.load(ordering: .sequentiallyConsistent) > 0 { break }
      }
      await Self.first(core.probe.cancelled.stream)
    }
  }

  @Test func theSlotLimitAnswersTooManyCallsAndAnExpiredCallKeepsItsSlot() async throws {
    try await Self.with({ $0.maxConcurrentCallsPerConnection = 2 }) { core in
      let transport = core.transport()
      let first = Task { await transport.call(Self.hold, payload: [], metadata: [:], timeoutMs: 60_000) }
      let second = Task { await transport.call(Self.hold, payload: [], metadata: [:], timeoutMs: 60_000) }
      var started = core.probe.started.stream.makeAsyncIterator()
      _ = await started.next()
      _ = await started.next()
      let third = await transport.call(Self.check, payload: [], metadata: [:], timeoutMs: 0)
      #expect(third.error?.reason == "TOO_MANY_CALLS")
      #expect(third.error?.code == .resourceExhausted)
      // A caller that gives up cancels its handler; the slot is free once it returned.
      first.cancel()
      second.cancel()
      #expect((await first.value).error?.reason == "CANCELLED")
      #expect((await second.value).error?.reason == "CANCELLED")
      var cancelled = core.probe.cancelled.stream.makeAsyncIterator()
      _ = await cancelled.next()
      _ = await cancelled.next()
      var free = false
      while !free {
        free = await transport.slotsTaken() == 0
        if !free { await Task.yield() }
      }
      let after = await transport.call(Self.check, payload: [], metadata: [:], timeoutMs: 0)
      #expect((try? after.result.get()) != nil)
    }
  }

  @Test func afterDrainCallsAreRefusedWithShuttingDownAndOneInFlightIsAnswered() async throws {
    try await Self.with { core in
      let transport = core.transport()
      // A deadline long enough for the handler to start on a busy machine (with too short
      // a one the router answers the call unstarted and `started` never comes).
      let inFlight = Task { await transport.call(Self.hold, payload: [], metadata: [:], timeoutMs: 3_000) }
      await Self.first(core.probe.started.stream)
      await transport.drain()
      let refused = await transport.call(Self.check, payload: [], metadata: [:], timeoutMs: 0)
      #expect(refused.error?.reason == "SHUTTING_DOWN")
      #expect(refused.error?.code == .unavailable)
      // The call in flight still gets its answer (here its deadline).
      #expect((await inFlight.value).error?.reason == "DEADLINE_EXCEEDED")
    }
  }

  @Test func eachCallLogsOneLineWithItsFields() async throws {
    try await Self.with { core in
      let transport = core.transport()
      _ = await transport.call(Self.check, payload: [], metadata: ["x-request-id": "log-1"], timeoutMs: 0)
      _ = await transport.call(Self.hold, payload: [], metadata: ["x-request-id": "log-2"], timeoutMs: 20)
      _ = await transport.call("/x.Y/Z", payload: [], metadata: ["x-request-id": "log-3"], timeoutMs: 0)
      let lines = core.lines.calls()
      let byID = Dictionary(lines.compactMap { line in (line["request_id"] as? String).map { ($0, line) } }) {
        first, _ in first
      }
      #expect(lines.count == 3)
      #expect(byID["log-1"]?["method"] as? String == Self.check)
      #expect(byID["log-1"]?["code"] as? Int == 0)
      #expect(byID["log-1"]?["reason"] as? String == "")
      #expect(byID["log-1"]?["duration_ms"] is Double || byID["log-1"]?["duration_ms"] is Int)
      #expect(byID["log-2"]?["code"] as? Int == Int(StatusCode.deadlineExceeded.rawValue))
      #expect(byID["log-2"]?["reason"] as? String == "DEADLINE_EXCEEDED")
      #expect(byID["log-3"]?["reason"] as? String == "UNKNOWN_METHOD")
      #expect(byID["log-3"]?["method"] as? String == "/x.Y/Z")
    }
  }
}
