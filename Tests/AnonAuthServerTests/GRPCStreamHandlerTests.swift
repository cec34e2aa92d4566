import AnonAuthNet
import AnonAuthService
import AnonAuthWire
import Foundation
import Synchronization
import Testing

@testable import AnonAuthServer

/// The gRPC stream handler against a fake HTTP/2 connection (`HTTP2StreamSink`), with
/// the router's test-only Sleep method and a local echo method: what goes out for a
/// served call, each refusal, a deadline, a reset by the peer, and a streaming method.
@Suite(.serialized) struct GRPCStreamHandlerTests {
  static let sleep = "/anonauth.test.TestService/Sleep"
  static let echo = "/test.Echo/Each"

  /// Records what the handler does to its streams.
  final class FakeSink: HTTP2StreamSink {
    enum Event: Equatable {
      case headers(Int32, [HTTP2Header], endStream: Bool)
      case data(Int32, [UInt8])
      case trailers(Int32, [HTTP2Header])
      case reset(Int32, UInt32)
    }

    var events: [Event] = []
    let calls: ConnectionCalls
    var peerHost: String? { "192.0.2.1" }
    var clientCertificateName: String? { nil }
    var goingAway: Bool { false }

    init(calls: ConnectionCalls) { self.calls = calls }

    func sendHeaders(_ stream: Int32, _ headers: [HTTP2Header], endStream: Bool) {
      events.append(.headers(stream, headers, endStream: endStream))
    }
    func sendData(_ stream: Int32, _ bytes: [UInt8], endStream: Bool) { events.append(.data(stream, bytes)) }
    func sendTrailers(_ stream: Int32, _ trailers: [HTTP2Header]) {
      events.append(.trailers(stream, trailers))
    }
    func resetStream(_ stream: Int32, errorCode: UInt32) { events.append(.reset(stream, errorCode)) }
    /// What `pendingBytes` reports: a peer that reads nothing keeps it high.
    var stuckBytes = 0
    func pendingBytes(_ stream: Int32) -> Int { stuckBytes }
    /// Streams the handler refused from their header block alone.
    var refusedAtOnce: [Int32] = []
    func streamRefusedAtOnce(_ stream: Int32) { refusedAtOnce.append(stream) }
    /// Streams whose handler waits for the drain event (a peer that reads nothing).
    var drainWaited: Set<Int32> = []
    func notifyWhenDrained(_ stream: Int32) -> Bool {
      guard stuckBytes > 0 else { return false }
      drainWaited.insert(stream)
      return true
    }
  }

  /// Answers each request message with the same bytes; ends OK, or with the status a
  /// message "fail" asks for.
  struct Echo: GRPCLocalMethod {
    var path: String { GRPCStreamHandlerTests.echo }
    var hasDefaultDeadline: Bool { false }
    func run(requests: AsyncStream<[UInt8]>, responses: GRPCResponseWriter) async -> GRPCFinalStatus {
      for await message in requests {
        if message == Array("fail".utf8) { return GRPCFinalStatus(.notFound, "asked to fail") }
        guard await responses.send(message) else { break }
      }
      return .ok
    }
  }

  final class Harness: @unchecked Sendable {
    // @unchecked Sendable is safe: the sink and handler are touched only inside
    // `onLoop`, on the loop's thread.
    let loop: EventLoop
    let core: ServerCore
    private var sink: FakeSink?
    private let handler = GRPCStreamHandler()

    init(_ adjust: (inout RPCServerConfig) -> Void = { _ in }) throws {
      loop = try EventLoop(name: "grpc-test")
      var config = RPCServerConfig(listen: try SocketAddress(parsing: "127.0.0.1:0"))
      adjust(&config)
      var router = Router()
      TestHooks.register(in: &router)
      // An admin method whose key check always passes: what raises the message limit.
      router.unary(AdminServiceMethods.serviceName, "Fake", authenticate: { _ throws(RPCError) in }) {
        (_: CheckRequest, _) throws(RPCError) in CheckResponse()
      }
      core = ServerCore(
        config: config, router: router, logger: Logger(minimum: .error, sink: { _ in }),
        metrics: ServerMetrics(),
        grpcMethods: GRPCLocalMethods([Echo()]))
      loop.start()
      onLoop { h in
        h.sink = FakeSink(
          calls: ConnectionCalls(
            core: h.core, loop: h.loop, peerHost: "192.0.2.1", clientCertificateName: nil))
      }
    }

    func stop() {
      onLoop { $0.sink?.calls.cancelAll() }
      loop.stopAndWait()
    }

    @discardableResult
    func onLoop<T>(_ body: @escaping (Harness) -> T) -> T {
      let done = DispatchSemaphore(value: 0)
      let result = Mutex<UncheckedBox<T>?>(nil)
      let work = UncheckedBox(body)
      loop.execute { [self] in
        let value = work.value(self)
        result.withLock { $0 = UncheckedBox(value) }
        done.signal()
      }
      done.wait()
      guard let value = result.withLock({ $0 }) else { preconditionFailure("the loop ran the body") }
      return value.value
    }

    func open(
      _ stream: Int32, path: String, extra: [HTTP2Header] = [], method: String = "POST",
      endStream: Bool = false
    ) {
      let headers =
        [
          HTTP2Header(":method", method), HTTP2Header(":scheme", "https"), HTTP2Header(":path", path),
          HTTP2Header(":authority", "localhost"), HTTP2Header("content-type", "application/grpc"),
          HTTP2Header("x-request-id", "req-\(stream)"),
        ] + extra
      onLoop { h in
        guard let sink = h.sink else { return }
        h.handler.streamOpened(stream, headers: headers, endStream: endStream, session: sink)
      }
    }

    /// Opens streams 1, 3, 5... on `paths`, ended at once, all in one turn of the loop.
    func openAtOnce(_ paths: [String]) {
      onLoop { h in
        guard let sink = h.sink else { return }
        for (i, path) in paths.enumerated() {
          let stream = Int32(2 * i + 1)
          let headers = [
            HTTP2Header(":method", "POST"), HTTP2Header(":scheme", "https"), HTTP2Header(":path", path),
            HTTP2Header(":authority", "localhost"), HTTP2Header("content-type", "application/grpc"),
          ]
          h.handler.streamOpened(stream, headers: headers, endStream: true, session: sink)
        }
      }
    }

    func send(_ stream: Int32, _ bytes: [UInt8], endStream: Bool = false) {
      onLoop { h in
        guard let sink = h.sink else { return }
        bytes.withUnsafeBytes { h.handler.stream(stream, received: $0, endStream: endStream, session: sink) }
      }
    }

    func close(_ stream: Int32, errorCode: UInt32) {
      onLoop { h in
        guard let sink = h.sink else { return }
        h.handler.streamClosed(stream, errorCode: errorCode, session: sink)
      }
    }

    /// The peer's window opened: everything queued on `stream` drained.
    func drain(_ stream: Int32) {
      onLoop { h in
        guard let sink = h.sink, sink.drainWaited.remove(stream) != nil else { return }
        sink.stuckBytes = 0
        h.handler.streamDrained(stream, session: sink)
      }
    }

    var events: [FakeSink.Event] { onLoop { $0.sink?.events ?? [] } }
    var sinkForTests: FakeSink? { sink }
    var taken: Int { onLoop { $0.sink?.calls.taken ?? -1 } }

    /// Waits until `condition` holds or a generous bound passes (a busy machine). Sleeps
    /// with `Task.sleep`, not by blocking a thread: the calls under test run on the same
    /// cooperative pool as the tests.
    func eventually(_ condition: @escaping ([FakeSink.Event]) -> Bool) async -> Bool {
      for _ in 0..<3000 {
        if condition(events) { return true }
        try? await Task.sleep(for: .milliseconds(20))
      }
      return condition(events)
    }
  }

  static func value(_ name: String, in headers: [HTTP2Header]) -> String? {
    headers.first { $0.name == name }?.value
  }

  /// The status of a trailers-only answer or of trailers, with the whole block.
  static func status(of event: FakeSink.Event) -> (code: String?, block: [HTTP2Header])? {
    switch event {
    case .headers(_, let headers, endStream: true): (value("grpc-status", in: headers), headers)
    case .trailers(_, let headers): (value("grpc-status", in: headers), headers)
    default: nil
    }
  }

  static func hasStatus(_ events: [FakeSink.Event]) -> Bool { events.contains { status(of: $0) != nil } }

  static func reason(in block: [HTTP2Header]) -> String? {
    guard let value = value("grpc-status-details-bin", in: block) else { return nil }
    let padded = value + String(repeating: "=", count: (4 - value.count % 4) % 4)
    guard let bytes = Data(base64Encoded: padded) else { return nil }
    let text = String(decoding: bytes, as: UTF8.self)
    return ["UNKNOWN_METHOD", "DEADLINE_EXCEEDED", "TOO_MANY_CALLS", "MALFORMED_REQUEST"].first {
      text.contains($0)
    }
  }

  static let emptyRequest = GRPCMessageDeframer.frame([])

  @Test func aUnaryCallIsAnsweredWithHeadersOneMessageAndTrailers() async throws {
    let h = try Harness()
    defer { h.stop() }
    h.open(1, path: Self.sleep)
    h.send(1, Self.emptyRequest, endStream: true)
    #expect(await h.eventually(Self.hasStatus))
    let events = h.events
    #expect(events.count == 3)
    guard events.count == 3, case .headers(1, let headers, endStream: false) = events[0],
      case .data(1, let data) = events[1], case .trailers(1, let trailers) = events[2]
    else { return }
    #expect(Self.value(":status", in: headers) == "200")
    #expect(Self.value("content-type", in: headers) == "application/grpc")
    #expect(Self.value("x-request-id", in: headers) == "req-1")
    var response = CheckResponse()
    response.status = "SLEPT"
    #expect(data == GRPCMessageDeframer.frame(response.serializedBytes()))
    #expect(trailers == [HTTP2Header("grpc-status", "0")])
  }

  @Test func anUnknownMethodIsUnimplementedWithItsReasonAtOnce() async throws {
    let h = try Harness()
    defer { h.stop() }
    h.open(3, path: "/anonauth.v1.NoSuchService/Nothing")
    #expect(await h.eventually(Self.hasStatus))
    let events = h.events
    let status = try #require(events.first.flatMap(Self.status))
    #expect(status.code == "12")
    #expect(Self.reason(in: status.block) == "UNKNOWN_METHOD")
    #expect(Self.value("x-request-id", in: status.block) == "req-3")
    // Not reset while the client still sends: libnghttp2 would drop the queued answer.
    #expect(events.count == 1)
  }

  @Test func aMessageOverTheUnauthenticatedLimitIsResourceExhausted() async throws {
    let h = try Harness { $0.maxUnauthenticatedFrameSize = 100 }
    defer { h.stop() }
    h.open(1, path: Self.sleep)
    h.send(1, [0, 0, 0, 0, 101])
    let status = try #require(h.events.first.flatMap(Self.status))
    #expect(status.code == "8")
    #expect(Self.value("grpc-status-details-bin", in: status.block) == nil)
    #expect(h.events.count == 1)
    #expect(h.taken == 0)
  }

  @Test func anAdminKeyCallRaisesTheMessageLimitForLaterStreams() async throws {
    let h = try Harness {
      $0.maxUnauthenticatedFrameSize = 100
      $0.maxFrameSize = 1000
    }
    defer { h.stop() }
    // A CheckRequest carrying one unknown 200-byte field (number 15).
    let message = GRPCMessageDeframer.frame(
      [0x7a, 0xc8, 0x01] + Array(repeating: UInt8(ascii: "x"), count: 200))
    h.open(1, path: Self.sleep)
    h.send(1, message, endStream: true)
    #expect(h.events.first.flatMap(Self.status)?.code == "8")
    h.open(3, path: "/anonauth.v1.AdminService/Fake")
    h.send(3, Self.emptyRequest, endStream: true)
    #expect(await h.eventually { $0.count == 4 })
    #expect(h.events.last.flatMap(Self.status)?.code == "0")
    // The key check ran off the loop and came back to it before the answer: the next
    // stream takes the larger limit.
    h.open(5, path: Self.sleep)
    h.send(5, message, endStream: true)
    #expect(await h.eventually { $0.count == 7 })
    #expect(h.events.last.flatMap(Self.status)?.code == "0")
  }

  @Test func aCompressedRequestIsRefusedAsUnimplementedNamingIdentity() async throws {
    let h = try Harness()
    defer { h.stop() }
    h.open(1, path: Self.sleep, extra: [HTTP2Header("grpc-encoding", "gzip")])
    let status = try #require(h.events.first.flatMap(Self.status))
    #expect(status.code == "12")
    #expect(Self.value("grpc-accept-encoding", in: status.block) == "identity")
  }

  @Test func theCompressedFlagWithoutAnEncodingIsInternal() async throws {
    let h = try Harness()
    defer { h.stop() }
    h.open(1, path: Self.sleep)
    h.send(1, [1, 0, 0, 0, 0], endStream: true)
    #expect(h.events.first.flatMap(Self.status)?.code == "13")
  }

  @Test func aMalformedTimeoutIsA400WithInternalAsGrpcGoAnswers() async throws {
    let h = try Harness()
    defer { h.stop() }
    h.open(1, path: Self.sleep, extra: [HTTP2Header("grpc-timeout", "1.5S")], endStream: true)
    let status = try #require(h.events.first.flatMap(Self.status))
    #expect(status.code == "13")
    #expect(Self.value(":status", in: status.block) == "400")
    // A long value is repeated cut to 64 scalars, not whole.
    h.open(3, path: Self.sleep, extra: [HTTP2Header("grpc-timeout", String(repeating: "9", count: 4000))])
    let long = try #require(h.events.last.flatMap(Self.status))
    #expect(
      Self.value("grpc-message", in: long.block)
        == "malformed grpc-timeout \"\(String(repeating: "9", count: 64))...\"")
  }

  @Test func unknownMethodsPastTheirBurstCountAsRefusals() async throws {
    let h = try Harness()
    defer { h.stop() }
    let burst = GRPCStreamHandler.unknownCallBurst
    // Twice the burst in one turn of the loop (microseconds: the bucket earns nothing).
    h.openAtOnce((0..<(2 * burst)).map { "/nowhere.Service/Call\($0)" })
    // Every one is answered; only those past the burst are counted as refused.
    #expect(await h.eventually { $0.compactMap(Self.status).count == 2 * burst })
    let refused = h.onLoop { $0.sinkForTests?.refusedAtOnce.count ?? -1 }
    #expect(refused >= burst - 2 && refused <= burst, "\(refused) refusals")
  }

  @Test func aGetIsA405() async throws {
    let h = try Harness()
    defer { h.stop() }
    h.open(1, path: Self.sleep, method: "GET", endStream: true)
    // Counted with the connection's refusals (past a burst, the connection is ended).
    #expect(h.onLoop { $0.sinkForTests?.refusedAtOnce } == [1])
    let status = try #require(h.events.first.flatMap(Self.status))
    #expect(Self.value(":status", in: status.block) == "405")
  }

  @Test func aUnaryCallNeedsExactlyOneMessage() async throws {
    let h = try Harness()
    defer { h.stop() }
    h.open(1, path: Self.sleep, endStream: true)
    #expect(h.events.first.flatMap(Self.status)?.code == "13")
    h.open(3, path: Self.sleep)
    h.send(3, Self.emptyRequest + Self.emptyRequest, endStream: true)
    #expect(h.events.last.flatMap(Self.status)?.code == "13")
    h.open(5, path: Self.sleep)
    h.send(5, [0, 0, 0, 0, 4, 1], endStream: true)  // ends inside the message
    #expect(h.events.last.flatMap(Self.status)?.code == "13")
    #expect(h.taken == 0)
  }

  @Test func theGrpcTimeoutIsTheCallsDeadline() async throws {
    let h = try Harness()
    defer { h.stop() }
    h.open(
      1, path: Self.sleep, extra: [HTTP2Header("grpc-timeout", "100m"), HTTP2Header("x-sleep-ms", "60000")])
    h.send(1, Self.emptyRequest, endStream: true)
    #expect(await h.eventually(Self.hasStatus))
    let status = try #require(h.events.first.flatMap(Self.status))
    #expect(status.code == "4")
    #expect(Self.reason(in: status.block) == "DEADLINE_EXCEEDED")
  }

  @Test func aHugeGrpcTimeoutOnALocalMethodIsNotAlreadyPast() async throws {
    let h = try Harness()
    defer { h.stop() }
    // 99999999 hours is more nanoseconds than UInt64 holds: clamped, not wrapped.
    h.open(1, path: Self.echo, extra: [HTTP2Header("grpc-timeout", "99999999H")])
    h.send(1, GRPCMessageDeframer.frame([1]))
    #expect(await h.eventually { $0.contains { if case .data = $0 { true } else { false } } })
    #expect(!Self.hasStatus(h.events))
    h.send(1, [], endStream: true)
    #expect(await h.eventually(Self.hasStatus))
    #expect(h.events.last == .trailers(1, [HTTP2Header("grpc-status", "0")]))
  }

  @Test func metadataOverTheCallLimitsIsMalformedRequest() async throws {
    let h = try Harness()
    defer { h.stop() }
    // 65 entries: 64 and the harness's x-request-id.
    let many = (0..<CallLimits.maxMetadataEntries).map { HTTP2Header("x-m\($0)", "v") }
    h.open(1, path: Self.echo, extra: many)
    h.open(3, path: Self.echo, extra: [HTTP2Header("x-big", String(repeating: "b", count: 8 * 1024))])
    // Within the limits: served.
    h.open(5, path: Self.echo, extra: [HTTP2Header("x-small", String(repeating: "b", count: 4 * 1024))])
    let blocks = h.events.compactMap(Self.status)
    #expect(blocks.count == 2)
    for block in blocks {
      #expect(block.code == "3")
      #expect(Self.reason(in: block.block) == "MALFORMED_REQUEST")
    }
    #expect(h.events.allSatisfy { if case .headers(5, _, _) = $0 { false } else { true } })
  }

  static func dataCount(_ events: [FakeSink.Event]) -> Int {
    events.filter { if case .data = $0 { true } else { false } }.count
  }

  /// Stream 1 of the echo method, its first answer queued behind a window that stays
  /// closed (its send waits for the drain event).
  static func answerBehindAClosedWindow(_ h: Harness) async {
    h.onLoop { $0.sinkForTests?.stuckBytes = 1 << 20 }
    h.open(1, path: Self.echo)
    h.send(1, GRPCMessageDeframer.frame([1]))
    #expect(await h.eventually { Self.dataCount($0) == 1 })
  }

  @Test func aLocalMethodsStreamHasOneAnswerOutstandingUntilTheDrainEvent() async throws {
    let h = try Harness()
    defer { h.stop() }
    await Self.answerBehindAClosedWindow(h)
    // The first answer waits behind a closed window: the next messages are held, not
    // answered, and nothing is reset or polled.
    h.send(1, GRPCMessageDeframer.frame([2]) + GRPCMessageDeframer.frame([3]), endStream: true)
    try await Task.sleep(for: .milliseconds(200))
    #expect(Self.dataCount(h.events) == 1)
    #expect(h.onLoop { $0.sinkForTests?.drainWaited == [1] })
    // The window opens: the held messages are answered, then the call ends.
    h.drain(1)
    #expect(await h.eventually(Self.hasStatus))
    let events = h.events
    #expect(events.contains(.data(1, GRPCMessageDeframer.frame([2]))))
    #expect(events.contains(.data(1, GRPCMessageDeframer.frame([3]))))
    #expect(events.last == .trailers(1, [HTTP2Header("grpc-status", "0")]))
  }

  @Test func aLocalMethodsStreamClosedWhileItsAnswerWaitsEndsItsCall() async throws {
    let h = try Harness()
    defer { h.stop() }
    await Self.answerBehindAClosedWindow(h)
    #expect(h.taken == 1)
    // The session resets the stalled stream (CANCEL): the waiting send returns false
    // and the method's task ends, giving its slot back.
    h.close(1, errorCode: 8)
    #expect(await h.eventually { _ in h.taken == 0 })
  }

  @Test func messagesHeldBehindAWaitingAnswerAreBounded() async throws {
    let h = try Harness()
    defer { h.stop() }
    await Self.answerBehindAClosedWindow(h)
    let many = (0...GRPCStreamHandler.maxQueuedMessages).flatMap { _ in GRPCMessageDeframer.frame([7]) }
    h.send(1, many)
    let status = try #require(h.events.last.flatMap(Self.status))
    #expect(status.code == "8")  // RESOURCE_EXHAUSTED
  }

  @Test func aStreamResetByThePeerCancelsItsCall() async throws {
    let h = try Harness()
    defer { h.stop() }
    h.open(1, path: Self.sleep, extra: [HTTP2Header("x-sleep-ms", "60000")])
    h.send(1, Self.emptyRequest, endStream: true)
    #expect(h.taken == 1)
    h.close(1, errorCode: 8)  // RST_STREAM CANCEL
    // The task was cancelled: its slot comes back long before the 60 s sleep would end.
    #expect(await h.eventually { _ in h.taken == 0 })
    #expect(h.events.isEmpty)
  }

  @Test func aRefusedCallIsAnsweredTrailersOnlyWithItsReason() async throws {
    let h = try Harness { $0.maxConcurrentCallsPerConnection = 1 }
    defer { h.stop() }
    h.open(1, path: Self.sleep, extra: [HTTP2Header("x-sleep-ms", "60000")])
    h.send(1, Self.emptyRequest, endStream: true)
    h.open(3, path: Self.sleep)
    h.send(3, Self.emptyRequest, endStream: true)
    let status = try #require(h.events.first.flatMap(Self.status))
    #expect(status.code == "8")
    #expect(Self.reason(in: status.block) == "TOO_MANY_CALLS")
  }

  @Test func aLocalMethodStreamsItsAnswersThenTrailers() async throws {
    let h = try Harness()
    defer { h.stop() }
    h.open(1, path: Self.echo)
    h.send(1, GRPCMessageDeframer.frame([1]) + GRPCMessageDeframer.frame([2, 2]))
    #expect(await h.eventually { $0.filter { if case .data = $0 { true } else { false } }.count == 2 })
    h.send(1, [], endStream: true)
    #expect(await h.eventually(Self.hasStatus))
    let events = h.events
    #expect(events.count == 4)
    guard events.count == 4, case .headers(1, let headers, endStream: false) = events[0] else { return }
    #expect(Self.value("x-request-id", in: headers) == "req-1")
    #expect(events[1] == .data(1, GRPCMessageDeframer.frame([1])))
    #expect(events[2] == .data(1, GRPCMessageDeframer.frame([2, 2])))
    #expect(events[3] == .trailers(1, [HTTP2Header("grpc-status", "0")]))
    #expect(await h.eventually { _ in h.taken == 0 })
  }

  @Test func aLocalMethodTakesSmallMessagesOnly() async throws {
    let h = try Harness()
    defer { h.stop() }
    h.open(1, path: Self.echo)
    h.send(1, [0, 0, 0, 0x20, 0x01])  // 8 KiB + 1
    let status = try #require(h.events.first.flatMap(Self.status))
    #expect(status.code == "8")
    #expect(await h.eventually { _ in h.taken == 0 })
  }

  @Test func aLocalMethodThatFailsBeforeAnyMessageAnswersTrailersOnly() async throws {
    let h = try Harness()
    defer { h.stop() }
    h.open(1, path: Self.echo)
    h.send(1, GRPCMessageDeframer.frame(Array("fail".utf8)), endStream: true)
    #expect(await h.eventually(Self.hasStatus))
    let status = try #require(h.events.first.flatMap(Self.status))
    #expect(status.code == "5")
    #expect(Self.value("grpc-message", in: status.block) == "asked to fail")
  }
}
