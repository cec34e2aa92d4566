import AnonAuthCrypto
import AnonAuthNet
import AnonAuthService
import AnonAuthTestSupport
import Foundation
import Synchronization
import Testing

@testable import AnonAuthServer

/// The HTTP/1.1 server connection with an application, in process, over the emulator
/// listener (plain TCP: the same connection code as HTTP over TLS): the call deadline,
/// cancellation when the peer leaves, the large-body admission, the listener kind and
/// graceful drain.
@Suite(.serialized) struct HTTPServerConnectionTests {
  /// Answers by path: `/echo` the body and the listener; `/slow` waits until cancelled
  /// (and records that); `/pause` waits for `release` and then answers 200.
  final class App: HTTPApplication {
    let cancelled = Mutex(0)
    let started = Mutex(0)
    let gate = AsyncStream<Void>.makeStream()

    func respond(to request: HTTPRequest, info: HTTPCallInfo) async -> HTTPReply {
      started.withLock { $0 += 1 }
      switch request.path {
      case "/slow":
        try? await Task.sleep(for: .seconds(60))
        if Task.isCancelled { cancelled.withLock { $0 += 1 } }
        return HTTPReply(status: 200)
      case "/pause":
        for await _ in gate.stream { break }
        return HTTPReply(status: 200, body: Array("done".utf8))
      default:
        let listener = info.listener == .emulator ? "emulator" : "rpc"
        return HTTPReply(status: 200, headers: [("x-listener", listener)], body: request.body)
      }
    }

    func admitsLargeBody(_ head: HTTPRequest) -> Bool { head.header("x-large") == "yes" }

    func release() { gate.continuation.yield() }
  }

  struct Running {
    let server: RPCServer
    let emulator: String
    let app: App
  }

  static func start(_ adjust: (inout RPCServerConfig) -> Void = { _ in }) throws -> Running {
    let scratch = try Scratch()
    let made = try SelfSignedCertificate.make()
    let certificate = try scratch.write("cert.pem", made.certificatePEM)
    let key = try scratch.write("key.pem", made.privateKeyPEM)
    let tls = try TLSContext.server(certificateChainFile: certificate, privateKeyFile: key)
    var config = RPCServerConfig(listen: try SocketAddress(parsing: "127.0.0.1:0"))
    config.emulatorListen = try SocketAddress(parsing: "127.0.0.1:0")
    config.ioThreads = 1
    adjust(&config)
    let app = App()
    let server = RPCServer(
      config: config, tls: tls, router: Router(), logger: Logger(minimum: .error, sink: { _ in }),
      metrics: ServerMetrics(), httpApplication: app)
    _ = try server.start()
    let emulator = try #require(server.emulatorAddress)
    return Running(server: server, emulator: emulator.description, app: app)
  }

  /// Runs `body` against a started server and shuts the server down however it ends
  /// (a server dropped while running leaves its loops serving freed objects).
  static func with(
    _ adjust: (inout RPCServerConfig) -> Void = { _ in }, _ body: (Running) async throws -> Void
  ) async throws {
    let running = try start(adjust)
    do {
      try await body(running)
    } catch {
      await running.server.shutdown()
      throw error
    }
    await running.server.shutdown()
  }

  static func post(_ path: String, body: String, headers: String = "") -> String {
    "POST \(path) HTTP/1.1\r\nHost: x\r\nContent-Length: \(body.utf8.count)\r\n\(headers)\r\n\(body)"
  }

  /// Polls `condition` until it holds or a generous bound passes (a busy machine).
  static func eventually(_ condition: () -> Bool) async -> Bool {
    for _ in 0..<600 {
      if condition() { return true }
      try? await Task.sleep(for: .milliseconds(50))
    }
    return condition()
  }

  @Test func theApplicationSeesTheEmulatorListenerAndTheBody() async throws {
    try await Self.with { running in
      let client = try HTTPPlainClient(running.emulator)
      try client.send(Self.post("/echo", body: "{\"a\":1}"))
      let response = try await client.response()
      #expect(response.status == 200)
      #expect(response.headers["x-listener"] == "emulator")
      #expect(response.body == Array("{\"a\":1}".utf8))
      #expect(response.headers["date"]?.hasSuffix(" GMT") == true)
    }
  }

  @Test func aRequestPastItsDeadlineIs504AndItsHandlerIsCancelled() async throws {
    try await Self.with({ $0.defaultCallTimeoutMs = 200 }) { running in
      let client = try HTTPPlainClient(running.emulator)
      try client.send("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
      let response = try await client.response()
      #expect(response.status == 504)
      #expect(response.headers["connection"] == "close")
      #expect(await Self.eventually { running.app.cancelled.withLock { $0 } == 1 })
    }
  }

  @Test func aPeerThatLeavesCancelsItsRequest() async throws {
    try await Self.with { running in
      let client = try HTTPPlainClient(running.emulator)
      try client.send("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
      #expect(await Self.eventually { running.app.started.withLock { $0 } == 1 })
      client.shutdownWrite()
      #expect(await Self.eventually { running.app.cancelled.withLock { $0 } == 1 })
    }
  }

  @Test func onlyARequestTheApplicationAdmitsMayBringALargeBody() async throws {
    let limits: (inout RPCServerConfig) -> Void = {
      $0.maxUnauthenticatedFrameSize = 1024
      $0.maxFrameSize = 64 * 1024
    }
    try await Self.with(limits) { running in
      let body = String(repeating: "a", count: 2000)
      let admitted = try HTTPPlainClient(running.emulator)
      try admitted.send(Self.post("/echo", body: body, headers: "x-large: yes\r\n"))
      #expect(try await admitted.response().body.count == 2000)
      let refused = try HTTPPlainClient(running.emulator)
      try refused.send(Self.post("/echo", body: body))
      #expect(try await refused.response().status == 413)
      let tooLarge = try HTTPPlainClient(running.emulator)
      try tooLarge.send(
        Self.post("/echo", body: String(repeating: "b", count: 70_000), headers: "x-large: yes\r\n"))
      #expect(try await tooLarge.response().status == 413)
    }
  }

  @Test func shutdownFinishesTheRequestInFlightWithConnectionClose() async throws {
    try await Self.with { running in
      let busy = try HTTPPlainClient(running.emulator)
      try busy.send("GET /pause HTTP/1.1\r\nHost: x\r\n\r\n")
      #expect(await Self.eventually { running.app.started.withLock { $0 } == 1 })
      let idle = try HTTPPlainClient(running.emulator)
      try idle.send("GET /echo HTTP/1.1\r\nHost: x\r\n\r\n")
      #expect(try await idle.response().status == 200)
      let shutdown = Task { await running.server.shutdown() }
      // The idle keep-alive connection is closed; the busy one is answered, then closed.
      #expect(await idle.isClosedByServer())
      running.app.release()
      let response = try await busy.response()
      #expect(response.status == 200)
      #expect(response.body == Array("done".utf8))
      #expect(response.headers["connection"] == "close")
      #expect(await busy.isClosedByServer())
      await shutdown.value
    }
  }

  @Test func pipelinedRequestsAreServedOneAtATimeInOrder() async throws {
    try await Self.with { running in
      let client = try HTTPPlainClient(running.emulator)
      try client.send((0..<10).map { Self.post("/echo", body: "\($0)") }.joined())
      for i in 0..<10 { #expect(try await client.response().body == Array("\(i)".utf8)) }
    }
  }
}
