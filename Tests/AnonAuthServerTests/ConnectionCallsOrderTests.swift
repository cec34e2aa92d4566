import AnonAuthNet
import AnonAuthService
import Synchronization
import Testing

@testable import AnonAuthServer

/// A draining transport closes in `onAllEnded`; the last call's answer must be queued
/// before that, or a closing connection drops it.
@Suite struct ConnectionCallsOrderTests {
  final class Recorder: Sendable {
    let events = Mutex<[String]>([])
    func add(_ event: String) { events.withLock { $0.append(event) } }
  }

  @Test func theLastCallIsAnsweredBeforeOnAllEnded() async throws {
    let config = RPCServerConfig(listen: try SocketAddress(parsing: "127.0.0.1:0"))
    let core = ServerCore(
      config: config, router: Router(), logger: Logger(minimum: .error, sink: { _ in }),
      metrics: ServerMetrics())
    let loop = try EventLoop(name: "calls-order-test")
    loop.start()
    defer { loop.stopAndWait() }
    let recorder = Recorder()
    let done = AsyncStream<Void>.makeStream()
    let calls = ConnectionCalls(core: core, loop: loop, peerHost: "192.0.2.1", clientCertificateName: nil)
    LoopBound(calls, loop: loop).execute { calls in
      calls.onAllEnded = {
        recorder.add("ended")
        done.continuation.yield()
      }
      _ = calls.startTask(
        id: 1, payloadBytes: 0, timeoutNanos: nil, work: { 7 },
        answer: { (_: Int) in recorder.add("answered") }, expired: {})
      // Draining with the call in flight: the transport closes once it has ended.
      calls.drain()
    }
    for await _ in done.stream { break }
    #expect(recorder.events.withLock { $0 } == ["answered", "ended"])
  }
}
