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
    let client = HTTP2TestClient()
    private var fake: FakeByteStream?
    private var server: HTTP2ServerConnection?

    init(_ adjust: (inout RPCServerConfig) -> Void = { _ in }) throws {
      loop = try EventLoop(name: "h2-test")
      var config = RPCServerConfig(listen: try SocketAddress(parsing: "127.0.0.1:0"))
      adjust(&config)
      core = ServerCore(
        config: config, router: Router(), logger: Logger(minimum: .error, sink: { _ in }),
        metrics: ServerMetrics(),
        httpApplication: app)
      loop.start()
      onLoop { harness in
        let fake = FakeByteStream(loop: harness.loop)
        let server = HTTP2ServerConnection(stream: fake, core: harness.core, registry: nil)
        fake.delegate = server
        harness.fake = fake
        harness.server = server
      }
    }

    func stop() {
      onLoop { harness in
        harness.server?.closeNow()
      }
      onLoop { _ in }
      loop.stopAndWait()
    }

    /// Runs `body` on the loop and waits for it.
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

    var connection: HTTP2ServerConnection? { server }
    var stream: FakeByteStream? { fake }

    /// Moves bytes both ways until neither side has anything to send.
    func pump() {
      onLoop { harness in
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
    func eventually(_ condition: @escaping (Harness) -> Bool) -> Bool {
      for _ in 0..<1500 {
        pump()
        if onLoop(condition) { return true }
        Thread.sleep(forTimeInterval: 0.02)
      }
      return onLoop(condition)
    }
  }

  @Test func theServerAnnouncesItsSettings() throws {
    let h = try Harness { $0.maxConcurrentCallsPerConnection = 7 }
    defer { h.stop() }
    h.pump()
    h.onLoop { h in
      #expect(h.client.settingsReceived)
      #expect(h.client.remoteSetting(NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS) == 7)
      #expect(h.client.remoteSetting(NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE) == 16 * 1024)
      #expect(h.client.remoteSetting(NGHTTP2_SETTINGS_ENABLE_PUSH) == 0)
      #expect(h.client.remoteSetting(NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE) == 64 * 1024)
    }
  }

  @Test func aJSONRequestIsServedAndConnectionHeadersAreDropped() throws {
    let h = try Harness()
    defer { h.stop() }
    let id = h.onLoop { h in
      h.client.request(
        path: "/echo", headers: [("content-type", "application/json")], body: Array("{\"a\":1}".utf8))
    }
    #expect(h.eventually { $0.client.responses[id]?.closedWith != nil })
    h.onLoop { h in
      let response = h.client.responses[id]
      #expect(response?.headers[":status"] == "200")
      #expect(response?.body == Array("{\"a\":1}".utf8))
      #expect(response?.headers["content-length"] == "7")
      #expect(response?.headers["connection"] == nil)
      #expect(response?.headers["x-request-id"]?.isEmpty == false)
      #expect(response?.closedWith == 0)
    }
  }

  @Test func aGRPCStreamWithNoHandlerIsUnimplemented() throws {
    let h = try Harness()
    defer { h.stop() }
    let id = h.onLoop { h in
      h.client.request(
        path: "/anonauth.v1.Account/SignUp", headers: [("content-type", "application/grpc+proto")],
        body: [0, 0, 0, 0, 0])
    }
    #expect(h.eventually { $0.client.responses[id]?.closedWith != nil })
    h.onLoop { h in
      #expect(h.client.responses[id]?.headers["grpc-status"] == "12")
      #expect(h.client.responses[id]?.headers[":status"] == "200")
    }
  }

  @Test func aDeclaredBodyOverTheLimitIs413BeforeItIsRead() throws {
    let h = try Harness()
    defer { h.stop() }
    let id = h.onLoop { h in
      h.client.request(
        path: "/echo", headers: [("content-length", "100000")], body: Array(repeating: 1, count: 10),
        endBody: false)
    }
    #expect(h.eventually { $0.client.responses[id]?.headers[":status"] != nil })
    h.onLoop { h in #expect(h.client.responses[id]?.headers[":status"] == "413") }
  }

  @Test func streamsOverTheLimitAreRefused() throws {
    let h = try Harness { $0.maxConcurrentCallsPerConnection = 2 }
    defer { h.stop() }
    // Sent before the client has read the server's SETTINGS: the client does not know
    // the limit yet, so all four HEADERS go out.
    let ids = h.onLoop { h in (0..<4).map { _ in h.client.request(method: "GET", path: "/pause") } }
    #expect(h.eventually { h in ids.filter { h.client.responses[$0]?.closedWith != nil }.count == 2 })
    h.onLoop { h in
      let refused = ids.filter { h.client.responses[$0]?.closedWith == NGHTTP2_REFUSED_STREAM.rawValue }
      #expect(refused.count == 2)
    }
    h.app.release(2)
    #expect(h.eventually { h in ids.allSatisfy { h.client.responses[$0]?.closedWith != nil } })
    h.onLoop { h in
      #expect(ids.filter { h.client.responses[$0]?.headers[":status"] == "200" }.count == 2)
    }
  }

  @Test func drainSendsGoAwayFinishesTheStreamInFlightAndCloses() throws {
    let h = try Harness()
    defer { h.stop() }
    let id = h.onLoop { h in h.client.request(method: "GET", path: "/pause") }
    #expect(h.eventually { ($0.connection?.calls.unanswered ?? 0) == 1 })
    h.onLoop { $0.connection?.drain() }
    // The shutdown notice, then the final GOAWAY naming the stream in flight.
    #expect(h.eventually { h in h.client.goAways.contains { $0.lastStream == id && $0.errorCode == 0 } })
    #expect(h.onLoop { $0.stream?.isOpen == true })
    h.app.release(1)
    #expect(h.eventually { $0.client.responses[id]?.closedWith == 0 })
    #expect(h.onLoop { $0.client.responses[id]?.headers[":status"] == "200" })
    #expect(h.eventually { $0.stream?.closed == true })
  }

  @Test func rapidResetEndsTheConnection() throws {
    let h = try Harness()
    defer { h.stop() }
    h.pump()
    /// Opens 50 streams with a body still to come, then resets them all.
    func openAndReset() {
      let ids = h.onLoop { h in
        (0..<50).map { _ in h.client.request(path: "/echo", body: [1], endBody: false) }
      }
      h.pump()
      h.onLoop { h in for id in ids { h.client.reset(id) } }
      h.pump()
    }
    // Within the burst (200): served as cancellations.
    for _ in 0..<3 { openAndReset() }
    #expect(h.onLoop { $0.client.goAways.isEmpty })
    // Far past it, whatever the machine's speed (33 tokens come back a second):
    // libnghttp2 answers GOAWAY (INTERNAL_ERROR, as its rate limiter does) and ends.
    for _ in 0..<20 where h.onLoop({ $0.client.goAways.isEmpty }) { openAndReset() }
    #expect(h.onLoop { h in h.client.goAways.contains { $0.errorCode == NGHTTP2_INTERNAL_ERROR.rawValue } })
    #expect(h.eventually { $0.stream?.closed == true })
  }

  @Test func aConnectionWithoutThePrefaceIsClosedAtTheHandshakeTimeout() throws {
    let h = try Harness { $0.handshakeTimeoutMs = 1000 }
    defer { h.stop() }
    h.onLoop { $0.connection?.checkTimeouts(now: MonotonicClock.now() + 2_000_000_000) }
    #expect(h.eventually { $0.stream?.closed == true })
  }

  @Test func anIdleConnectionGetsGoAwayNoErrorAndIsClosed() throws {
    let h = try Harness { $0.idleTimeoutMs = 1000 }
    defer { h.stop() }
    h.pump()
    h.onLoop { $0.connection?.checkTimeouts(now: MonotonicClock.now()) }
    h.pump()
    #expect(h.onLoop { $0.client.goAways.isEmpty && $0.stream?.isOpen == true })
    h.onLoop { $0.connection?.checkTimeouts(now: MonotonicClock.now() + 2_000_000_000) }
    h.pump()
    #expect(h.onLoop { h in h.client.goAways.contains { $0.errorCode == 0 } })
    #expect(h.eventually { $0.stream?.closed == true })
  }

  @Test func aStalledRequestBodyIsResetAtThePartialTimeout() throws {
    let h = try Harness { $0.partialFrameTimeoutMs = 1000 }
    defer { h.stop() }
    let id = h.onLoop { h in h.client.request(path: "/echo", body: [1, 2, 3], endBody: false) }
    h.pump()
    #expect(h.onLoop { $0.core.receiveBudget.totalBytes == 3 })
    h.onLoop { $0.connection?.checkTimeouts(now: MonotonicClock.now() + 2_000_000_000) }
    #expect(h.eventually { $0.client.responses[id]?.closedWith == NGHTTP2_CANCEL.rawValue })
    #expect(h.onLoop { $0.core.receiveBudget.totalBytes == 0 && $0.stream?.isOpen == true })
  }
}
