import AnonAuthNet
import AnonAuthService
import CNghttp2
import Foundation
import Synchronization
import Testing

@testable import AnonAuthServer

/// The HTTP/2 server session over a fake byte stream, driven by libnghttp2's own client
/// session: the SETTINGS it announces, a JSON API request served, the stream limit
/// (REFUSED_STREAM), GOAWAY on drain, the rapid-reset limit, the timeouts.
@Suite(.serialized) struct HTTP2ServerConnectionTests {
  /// `/echo` answers the body; `/pause` waits for `release`.
  final class App: HTTPApplication {
    let gate = AsyncStream<Void>.makeStream()

    func respond(to request: HTTPRequest, info: HTTPCallInfo) async -> HTTPReply {
      if request.path == "/pause" {
        for await _ in gate.stream { break }
        return HTTPReply(status: 200, body: Array("done".utf8))
      }
      return HTTPReply(
        status: 200, headers: [("content-type", "application/json"), ("connection", "close")],
        body: request.body)
    }

    func release(_ count: Int) { for _ in 0..<count { gate.continuation.yield() } }
  }

  /// One server connection and one client, everything on the loop's thread.
  final class Harness: @unchecked Sendable {
    // @unchecked Sendable is safe: every field but the loop is touched only inside
    // `onLoop`, on the loop's thread.
    let loop: EventLoop
    let app = App()
    let core: ServerCore
    let client: HTTP2TestClient
    private var fake: FakeByteStream?
    private var server: HTTP2ServerConnection?

    init(
      _ adjust: (inout RPCServerConfig) -> Void = { _ in }, clientWindow: UInt32? = nil,
      grpcHandler: (any HTTP2StreamHandler & Sendable)? = nil
    ) throws {
      client = HTTP2TestClient(initialWindow: clientWindow)
      loop = try EventLoop(name: "h2-test")
      var config = RPCServerConfig(listen: try SocketAddress(parsing: "127.0.0.1:0"))
      adjust(&config)
      var makeGRPCHandler: (@Sendable () -> any HTTP2StreamHandler)?
      if let grpcHandler { makeGRPCHandler = { grpcHandler } }
      core = ServerCore(
        config: config, router: Router(), logger: Logger(minimum: .error, sink: { _ in }),
        metrics: ServerMetrics(),
        httpApplication: app, makeGRPCHandler: makeGRPCHandler)
      loop.start()
    }

    /// Makes the connection (on the loop, where it lives).
    func open() async {
      await onLoop { harness in
        let fake = FakeByteStream(loop: harness.loop)
        let server = HTTP2ServerConnection(stream: fake, core: harness.core, registry: nil)
        fake.delegate = server
        harness.fake = fake
        harness.server = server
      }
    }

    func stop() async {
      await onLoop { harness in harness.server?.closeNow() }
      await onLoop { _ in }
      loop.stopAndWait()
    }

    /// Runs `body` with a new harness and stops it however `body` ends.
    static func with(
      _ adjust: (inout RPCServerConfig) -> Void = { _ in }, clientWindow: UInt32? = nil,
      _ body: (Harness) async throws -> Void
    ) async throws {
      let harness = try Harness(adjust, clientWindow: clientWindow)
      await harness.open()
      do {
        try await body(harness)
      } catch {
        await harness.stop()
        throw error
      }
      await harness.stop()
    }

    /// Runs `body` on the loop and waits for it (without holding a thread).
    @discardableResult
    func onLoop<T>(_ body: @escaping (Harness) -> T) async -> T {
      let work = UncheckedBox(body)
      let result = await withCheckedContinuation {
        (continuation: CheckedContinuation<UncheckedBox<T>, Never>) in
        loop.execute { [self] in continuation.resume(returning: UncheckedBox(work.value(self))) }
      }
      return result.value
    }

    var connection: HTTP2ServerConnection? { server }
    var stream: FakeByteStream? { fake }

    /// Moves bytes both ways until neither side has anything to send.
    func pump() async {
      await onLoop { harness in
        for _ in 0..<1000 {
          let out = harness.client.output()
          if !out.isEmpty, let fake = harness.fake, fake.isOpen {
            out.withUnsafeBytes { harness.server?.stream(fake, didReceive: $0) }
          }
          let back = harness.fake?.takeSent() ?? []
          harness.client.input(back)
          if out.isEmpty && back.isEmpty { break }
        }
      }
    }

    /// Pumps until `condition` holds or a generous bound passes (a busy machine).
    func eventually(_ condition: @escaping (Harness) -> Bool) async -> Bool {
      for _ in 0..<1500 {
        await pump()
        if await onLoop(condition) { return true }
        try? await Task.sleep(for: .milliseconds(20))
      }
      return await onLoop(condition)
    }
  }

  @Test func theServerAnnouncesItsSettings() async throws {
    try await Harness.with({ $0.maxConcurrentCallsPerConnection = 7 }) { h in
      await h.pump()
      let settings = await h.onLoop { h in
        [
          NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE,
          NGHTTP2_SETTINGS_ENABLE_PUSH, NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE,
        ].map { h.client.remoteSetting($0) }
      }
      #expect(await h.onLoop { $0.client.settingsReceived })
      #expect(settings == [7, 16 * 1024, 0, 64 * 1024])
    }
  }

  /// The session's output of one turn (here the preface: SETTINGS and the connection's
  /// WINDOW_UPDATE) is queued as one array, not one per frame.
  @Test func oneTurnsFramesAreQueuedInOneSend() async throws {
    try await Harness.with { h in
      let (sends, bytes) = await h.onLoop { h in (h.stream?.sends ?? 0, h.stream?.sent.count ?? 0) }
      #expect(sends == 1)
      #expect(bytes > 9 + 9)  // more than one frame header
    }
  }

  @Test func aJSONRequestIsServedAndConnectionHeadersAreDropped() async throws {
    try await Harness.with { h in
      let id = await h.onLoop { h in
        h.client.request(
          path: "/echo", headers: [("content-type", "application/json")], body: Array("{\"a\":1}".utf8))
      }
      #expect(await h.eventually { $0.client.responses[id]?.closedWith != nil })
      let response = await h.onLoop { $0.client.responses[id] }
      #expect(response?.headers[":status"] == "200")
      #expect(response?.body == Array("{\"a\":1}".utf8))
      #expect(response?.headers["content-length"] == "7")
      #expect(response?.headers["connection"] == nil)
      #expect(response?.headers["x-request-id"]?.isEmpty == false)
      #expect(response?.closedWith == 0)
    }
  }

  @Test func aGRPCStreamWithNoHandlerIsUnimplemented() async throws {
    try await Harness.with { h in
      let id = await h.onLoop { h in
        h.client.request(
          path: "/anonauth.v1.Account/SignUp", headers: [("content-type", "application/grpc+proto")],
          body: [0, 0, 0, 0, 0])
      }
      #expect(await h.eventually { $0.client.responses[id]?.closedWith != nil })
      let response = await h.onLoop { $0.client.responses[id] }
      #expect(response?.headers["grpc-status"] == "12")
      #expect(response?.headers[":status"] == "200")
    }
  }

  @Test func aDeclaredBodyOverTheLimitIs413BeforeItIsRead() async throws {
    try await Harness.with { h in
      let id = await h.onLoop { h in
        h.client.request(
          path: "/echo", headers: [("content-length", "100000")], body: Array(repeating: 1, count: 10),
          endBody: false)
      }
      #expect(await h.eventually { $0.client.responses[id]?.headers[":status"] != nil })
      #expect(await h.onLoop { $0.client.responses[id]?.headers[":status"] } == "413")
      // The body bytes that follow the answer are dropped, not charged.
      #expect(await h.onLoop { $0.core.receiveBudget.totalBytes } == 0)
    }
  }

  @Test func streamsOverTheLimitAreRefused() async throws {
    try await Harness.with({ $0.maxConcurrentCallsPerConnection = 2 }) { h in
      // Sent before the client has read the server's SETTINGS: the client does not know
      // the limit yet, so all four HEADERS go out.
      let ids = await h.onLoop { h in (0..<4).map { _ in h.client.request(method: "GET", path: "/pause") } }
      #expect(await h.eventually { h in ids.filter { h.client.responses[$0]?.closedWith != nil }.count == 2 })
      let refused = await h.onLoop { h in
        ids.filter { h.client.responses[$0]?.closedWith == NGHTTP2_REFUSED_STREAM.rawValue }.count
      }
      #expect(refused == 2)
      h.app.release(2)
      #expect(await h.eventually { h in ids.allSatisfy { h.client.responses[$0]?.closedWith != nil } })
      let served = await h.onLoop { h in
        ids.filter { h.client.responses[$0]?.headers[":status"] == "200" }.count
      }
      #expect(served == 2)
    }
  }

  @Test func drainSendsGoAwayFinishesTheStreamInFlightAndCloses() async throws {
    try await Harness.with { h in
      let id = await h.onLoop { h in h.client.request(method: "GET", path: "/pause") }
      #expect(await h.eventually { ($0.connection?.calls.unanswered ?? 0) == 1 })
      await h.onLoop { $0.connection?.drain() }
      // The shutdown notice, then the final GOAWAY naming the stream in flight.
      #expect(
        await h.eventually { h in h.client.goAways.contains { $0.lastStream == id && $0.errorCode == 0 } })
      #expect(await h.onLoop { $0.stream?.isOpen == true })
      h.app.release(1)
      #expect(await h.eventually { $0.client.responses[id]?.closedWith == 0 })
      #expect(await h.onLoop { $0.client.responses[id]?.headers[":status"] } == "200")
      #expect(await h.eventually { $0.stream?.closed == true })
    }
  }

  @Test func aStreamOpenedAfterTheShutdownNoticeIsServed() async throws {
    try await Harness.with { h in
      await h.pump()
      // The notice goes out, and the client, not having read it, opens a stream: it is
      // before the final GOAWAY, so it is served, not refused as shutting down.
      let id = await h.onLoop { h in
        h.connection?.drain()
        return h.client.request(
          path: "/echo", headers: [("content-type", "application/json")], body: [0x7b, 0x7d])
      }
      #expect(await h.eventually { $0.client.responses[id]?.closedWith != nil })
      #expect(await h.onLoop { $0.client.responses[id]?.headers[":status"] } == "200")
    }
  }

  @Test func rapidResetEndsTheConnection() async throws {
    try await Harness.with { h in
      await h.pump()
      /// Opens 50 streams with a body still to come, then resets them all.
      func openAndReset() async {
        let ids = await h.onLoop { h in
          (0..<50).map { _ in h.client.request(path: "/echo", body: [1], endBody: false) }
        }
        await h.pump()
        await h.onLoop { h in for id in ids { h.client.reset(id) } }
        await h.pump()
      }
      // Within the burst (200): served as cancellations.
      for _ in 0..<3 { await openAndReset() }
      #expect(await h.onLoop { $0.client.goAways.isEmpty })
      // Far past it, whatever the machine's speed (33 tokens come back a second):
      // libnghttp2 answers GOAWAY (INTERNAL_ERROR, as its rate limiter does) and ends.
      for _ in 0..<20 where await h.onLoop({ $0.client.goAways.isEmpty }) { await openAndReset() }
      let codes = await h.onLoop { $0.client.goAways.map(\.errorCode) }
      #expect(codes.contains(NGHTTP2_INTERNAL_ERROR.rawValue))
      #expect(await h.eventually { $0.stream?.closed == true })
    }
  }

  @Test func aConnectionWithoutThePrefaceIsClosedAtTheHandshakeTimeout() async throws {
    try await Harness.with({ $0.handshakeTimeoutMs = 1000 }) { h in
      await h.onLoop { $0.connection?.checkTimeouts(now: MonotonicClock.now()) }
      #expect(await h.onLoop { $0.stream?.isOpen == true })
      await h.onLoop { $0.connection?.checkTimeouts(now: MonotonicClock.now() + 2_000_000_000) }
      #expect(await h.eventually { $0.stream?.closed == true })
    }
  }

  @Test func anIdleConnectionGetsGoAwayNoErrorAndIsClosed() async throws {
    try await Harness.with({ $0.idleTimeoutMs = 1000 }) { h in
      await h.pump()
      await h.onLoop { $0.connection?.checkTimeouts(now: MonotonicClock.now()) }
      await h.pump()
      #expect(await h.onLoop { $0.client.goAways.isEmpty && $0.stream?.isOpen == true })
      await h.onLoop { $0.connection?.checkTimeouts(now: MonotonicClock.now() + 2_000_000_000) }
      await h.pump()
      #expect(await h.onLoop { h in h.client.goAways.contains { $0.errorCode == 0 } })
      #expect(await h.eventually { $0.stream?.closed == true })
    }
  }

  @Test func aStalledRequestBodyIsResetAtThePartialTimeout() async throws {
    try await Harness.with({ $0.partialFrameTimeoutMs = 1000 }) { h in
      let id = await h.onLoop { h in h.client.request(path: "/echo", body: [1, 2, 3], endBody: false) }
      await h.pump()
      #expect(await h.onLoop { $0.core.receiveBudget.totalBytes } == 3)
      await h.onLoop { $0.connection?.checkTimeouts(now: MonotonicClock.now() + 2_000_000_000) }
      #expect(await h.eventually { $0.client.responses[id]?.closedWith == NGHTTP2_CANCEL.rawValue })
      #expect(await h.onLoop { $0.core.receiveBudget.totalBytes } == 0)
      #expect(await h.onLoop { $0.stream?.isOpen == true })
    }
  }

  @Test func aTrickledBodyDoesNotRestartThePartialTimeout() async throws {
    try await Harness.with({ $0.partialFrameTimeoutMs = 1000 }) { h in
      let id = await h.onLoop { h in h.client.request(path: "/echo", body: [1], endBody: false) }
      await h.pump()
      let started = await h.onLoop { _ in MonotonicClock.now() }
      // One more byte well after the first (sleeping only makes the gap longer).
      try await Task.sleep(for: .milliseconds(1200))
      await h.onLoop { $0.client.sendMore(id, [2]) }
      await h.pump()
      #expect(await h.onLoop { $0.core.receiveBudget.totalBytes } == 2)
      // Measured from the body's start, the timeout has passed, whatever came since.
      await h.onLoop { $0.connection?.checkTimeouts(now: started + 1_100_000_000) }
      #expect(await h.eventually { $0.client.responses[id]?.closedWith == NGHTTP2_CANCEL.rawValue })
      #expect(await h.onLoop { $0.core.receiveBudget.totalBytes } == 0)
    }
  }

  /// Records the body bytes handed to it.
  final class Recorder: HTTP2StreamHandler, @unchecked Sendable {
    // @unchecked Sendable is safe: the session calls it on the loop's thread only, and
    // the test reads it there (`onLoop`).
    var received: [UInt8] = []
    func streamOpened(_ stream: Int32, headers: [HTTP2Header], endStream: Bool, session: any HTTP2StreamSink)
    {}
    func stream(
      _ stream: Int32, received bytes: UnsafeRawBufferPointer, endStream: Bool, session: any HTTP2StreamSink
    ) { received += bytes }
    func streamClosed(_ stream: Int32, errorCode: UInt32, session: any HTTP2StreamSink) {}
  }

  /// Hands every chunk on as whole messages, as a streaming gRPC method's handler does.
  final class Taker: HTTP2StreamHandler, @unchecked Sendable {
    // @unchecked Sendable is safe: the session calls it on the loop's thread only.
    func streamOpened(_ stream: Int32, headers: [HTTP2Header], endStream: Bool, session: any HTTP2StreamSink)
    {}
    func stream(
      _ stream: Int32, received bytes: UnsafeRawBufferPointer, endStream: Bool, session: any HTTP2StreamSink
    ) { session.messagesTaken(stream, bytes: bytes.count) }
    func streamClosed(_ stream: Int32, errorCode: UInt32, session: any HTTP2StreamSink) {}
  }

  @Test func wholeMessagesTakenGiveTheBudgetBackAndRestartThePartialClock() async throws {
    let harness = try Harness({ $0.partialFrameTimeoutMs = 1000 }, grpcHandler: Taker())
    await harness.open()
    await harness.pump()
    let id = await harness.onLoop { h in
      h.client.request(
        path: "/x", headers: [("content-type", "application/grpc")], body: [0, 0, 0, 0, 1, 9], endBody: false)
    }
    await harness.pump()
    // Taken as it came: nothing stays charged while the stream is open.
    #expect(await harness.onLoop { $0.core.receiveBudget.totalBytes } == 0)
    // A whole message well after the header block (sleeping only widens the gap).
    try await Task.sleep(for: .milliseconds(1200))
    await harness.onLoop { $0.client.sendMore(id, [0, 0, 0, 0, 1, 8]) }
    await harness.pump()
    let taken = await harness.onLoop { _ in MonotonicClock.now() }
    // Past the timeout from the header block, within it from the last message: kept.
    await harness.onLoop { $0.connection?.checkTimeouts(now: taken + 500_000_000) }
    await harness.pump()
    #expect(await harness.onLoop { $0.client.responses[id]?.closedWith } == nil)
    // Past it from the last message too: reset.
    await harness.onLoop { $0.connection?.checkTimeouts(now: taken + 1_100_000_000) }
    #expect(await harness.eventually { $0.client.responses[id]?.closedWith == NGHTTP2_CANCEL.rawValue })
    await harness.stop()
  }

  @Test func noBodyChunkReachesTheHandlerAfterOneIsRefusedByTheBudget() async throws {
    let recorder = Recorder()
    let harness = try Harness({ $0.maxBufferedBytes = 10 }, grpcHandler: recorder)
    await harness.open()
    await harness.pump()
    // 8 bytes (fit), then 5 (over the budget: refused, the stream reset), then 1 (would
    // fit again, but must not reach the handler out of place). The chunks are handed to
    // the session's data callback as libnghttp2 would, whatever it does with frames
    // for a stream whose reset is queued.
    await harness.onLoop { h in
      let id = h.client.request(
        path: "/x", headers: [("content-type", "application/grpc")], body: Array(repeating: 1, count: 8),
        endBody: false)
      let bytes = h.client.output()
      guard let fake = h.stream, let connection = h.connection else { return }
      bytes.withUnsafeBytes { connection.stream(fake, didReceive: $0) }
      for chunk in [[UInt8](repeating: 2, count: 5), [3]] {
        _ = chunk.withUnsafeBytes { connection.dataReceived(id, $0) }
      }
    }
    #expect(await harness.onLoop { _ in recorder.received } == Array(repeating: 1, count: 8))
    await harness.stop()
  }

  @Test func flushStopsAtTheHighWatermarkBetweenFrames() async throws {
    try await Harness.with { h in
      await h.pump()
      await h.onLoop { $0.stream?.highWater = 1000 }
      let body = Array(repeating: UInt8(ascii: "a"), count: 30000)
      let id = await h.onLoop { h in h.client.request(path: "/echo", body: body) }
      // The answer's HEADERS and first DATA frame (16 KiB) pass the watermark: the
      // second frame waits in the session, not in the socket's queue.
      #expect(await h.eventually { $0.client.responses[id]?.headers[":status"] == "200" })
      #expect(await h.onLoop { $0.client.responses[id]?.body.count ?? 0 } < body.count)
      // The socket drained: its event (no timer) moves the rest.
      await h.onLoop { h in
        h.stream?.highWater = nil
        h.stream?.readPaused = false
        if let stream = h.stream { h.connection?.streamOutputDrained(stream) }
      }
      #expect(await h.eventually { $0.client.responses[id]?.closedWith == 0 })
      #expect(await h.onLoop { $0.client.responses[id]?.body } == body)
    }
  }

  @Test func aHeaderListOverTheLimitIsAnswered431() async throws {
    try await Harness.with { h in
      #expect(await h.onLoop { $0.stream?.deprioritized } == false)
      let big = String(repeating: "b", count: 17 * 1024)
      let id = await h.onLoop { h in h.client.request(method: "GET", path: "/echo", headers: [("x-big", big)])
      }
      #expect(await h.eventually { $0.client.responses[id]?.closedWith != nil })
      #expect(await h.onLoop { $0.client.responses[id]?.headers[":status"] } == "431")
      // A connection with a refused stream is served after the loop's others from now on.
      #expect(await h.onLoop { $0.stream?.deprioritized } == true)
    }
  }

  @Test func answersQueuedOverTheOutputBudgetRefuseNewStreamsUntilTheyDrain() async throws {
    try await Harness.with(clientWindow: 0) { h in
      // 20 answers of 60,000 bytes wait behind closed windows: over the connection's
      // 1 MiB of queued output.
      let body = Array(repeating: UInt8(7), count: 60_000)
      var ids: [Int32] = []
      for _ in 0..<20 { ids.append(await h.onLoop { $0.client.request(path: "/echo", body: body) }) }
      #expect(
        await h.eventually { h in ids.allSatisfy { h.client.responses[$0]?.headers[":status"] == "200" } })
      #expect(await h.eventually { ($0.connection?.calls.taken ?? 1) == 0 })
      #expect(await h.onLoop { $0.core.receiveBudget.totalBytes } >= 20 * 60_000)
      // A new stream is refused, not served: REFUSED_STREAM (7), nothing done.
      let refused = await h.onLoop { $0.client.request(method: "GET", path: "/echo") }
      #expect(await h.eventually { $0.client.responses[refused]?.closedWith != nil })
      #expect(await h.onLoop { $0.client.responses[refused]?.closedWith } == NGHTTP2_REFUSED_STREAM.rawValue)
      #expect(h.core.metrics.http2StreamsRefusedOverOutputBudget.load(ordering: .relaxed) == 1)
      // The peer reads: the answers drain, the charge goes, and new streams are served.
      await h.onLoop { h in for id in ids { h.client.openWindow(id, by: 1 << 20) } }
      #expect(await h.eventually { h in ids.allSatisfy { h.client.responses[$0]?.closedWith == 0 } })
      #expect(await h.onLoop { $0.client.responses[ids[0]]?.body } == body)
      #expect(await h.onLoop { $0.core.receiveBudget.totalBytes } == 0)
      let served = await h.onLoop { $0.client.request(path: "/echo", body: [1]) }
      #expect(await h.eventually { $0.client.responses[served]?.headers[":status"] == "200" })
      await h.onLoop { $0.client.openWindow(served, by: 1 << 20) }
      #expect(await h.eventually { $0.client.responses[served]?.closedWith == 0 })
      #expect(await h.onLoop { $0.client.responses[served]?.body } == [1])
    }
  }

  @Test func aConnectionThatKeepsSendingRefusedHeaderListsIsCalmed() async throws {
    try await Harness.with { h in
      let big = String(repeating: "b", count: 17 * 1024)
      var ids: [Int32] = []
      for _ in 0...HTTP2SessionLimits.refusedStreamBurst {
        ids.append(
          await h.onLoop { $0.client.request(method: "GET", path: "/echo", headers: [("x-big", big)]) })
      }
      #expect(
        await h.eventually {
          $0.client.goAways.contains { $0.errorCode == NGHTTP2_ENHANCE_YOUR_CALM.rawValue }
        })
      // The refusals within the burst were answered 431 first.
      #expect(await h.onLoop { $0.client.responses[ids[0]]?.headers[":status"] } == "431")
      #expect(await h.eventually { $0.stream?.closed == true })
      #expect(h.core.metrics.http2HeaderListsRefused.load(ordering: .relaxed) >= 8)
      #expect(h.core.metrics.http2ConnectionsCalmed.load(ordering: .relaxed) == 1)
    }
  }

  @Test func aPeerThatNeverOpensItsWindowIsAnsweredAndClosedWhenIdle() async throws {
    try await Harness.with({ $0.idleTimeoutMs = 1000 }, clientWindow: 0) { h in
      let id = await h.onLoop { h in h.client.request(path: "/echo", body: Array(repeating: 7, count: 1000)) }
      // The answer's HEADERS go out; its body waits for a window that never opens.
      #expect(await h.eventually { $0.client.responses[id]?.headers[":status"] == "200" })
      #expect(await h.eventually { ($0.connection?.calls.taken ?? 1) == 0 })
      let held = await h.onLoop { h in
        (h.connection?.pendingBytes(id) ?? 0, h.client.responses[id]?.body.count)
      }
      #expect(held.0 == 1000)  // queued on the stream, bounded by what the handler made
      #expect((held.1 ?? 0) == 0)
      await h.onLoop { $0.connection?.checkTimeouts(now: MonotonicClock.now() + 2_000_000_000) }
      #expect(await h.eventually { $0.stream?.closed == true })
    }
  }
}
