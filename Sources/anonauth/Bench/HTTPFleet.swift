import AnonAuthNet
import Foundation
import Glibc
import Synchronization

/// The HTTPS side of a bench: keep-alive HTTP/1.1 connections with one request in flight
/// each (all HTTP/1.1 allows without pipelining), opened and warmed up before any timing
/// and kept open across rounds, as the native bench keeps its connections. They all run
/// on one event-loop thread of their own, as the native client's connections share one:
/// so both sides load the daemon the same way. (A thread per connection blocked in
/// `poll` would make each of the daemon's reply writes wake a sleeping thread inside the
/// daemon's own system call, a cost a remote client would not charge to the daemon.)
final class HTTPFleet: Sendable {
  /// Where the connections go and how.
  struct Target: Sendable {
    let host: String
    let port: UInt16
    let context: TLSContext
    let timeoutMs: Int
  }

  let count: Int
  private let loop: EventLoop
  private let driver: LoopBound<HTTPFleetDriver>
  private let closed = Atomic<Bool>(false)
  private let reconnectCount: HTTPFleetDriver.Counter

  /// Opens `count` connections, each warmed up with one request of the workload (whose
  /// cost falls before the measurement, like the native bench's warm-up call).
  /// - Parameters:
  ///   - request: the bytes of each request (called once a request).
  ///   - failureReason: nil for a good answer, else the reason to count it under.
  /// - Throws: `.failed` when a connection cannot be opened or its warm-up fails.
  init(
    _ target: Target, count: Int, request: @escaping @Sendable () -> [UInt8],
    failureReason: @escaping @Sendable (HTTPResponse) -> String?
  ) async throws(CLIError) {
    let address: SocketAddress
    do {
      address = try SocketAddress(host: target.host, port: target.port)
    } catch {
      throw .usage("bad address \(target.host):\(target.port)")
    }
    do {
      loop = try EventLoop(name: "bench-http")
    } catch {
      throw .failed("HTTP client loop: \(error)")
    }
    // OpenSSL writes to sockets with write(2): a peer's reset must not kill the process.
    signal(SIGPIPE, SIG_IGN)
    _ = Socket.raiseDescriptorLimit()
    loop.start()
    self.count = count
    let counter = HTTPFleetDriver.Counter()
    reconnectCount = counter
    driver = LoopBound(
      HTTPFleetDriver(
        target: target, loop: loop, address: address, count: count, request: request,
        failureReason: failureReason,
        reconnects: counter),
      loop: loop)
    let failure: String? = await withCheckedContinuation { continuation in
      driver.execute { $0.warmUp { continuation.resume(returning: $0) } }
    }
    if let failure {
      close()
      throw .failed("HTTP warm-up failed: \(failure)")
    }
  }

  /// Connections reopened during rounds because the server closed one or a call failed.
  var reconnects: Int { reconnectCount.value.load(ordering: .relaxed) }

  /// Runs every connection for `seconds`; returns the wall time.
  func run(seconds: Int, recorder: LatencyRecorder) async -> Double {
    let clock = ContinuousClock()
    let started = clock.now
    let end = started + .seconds(seconds)
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      driver.execute { $0.round(until: end, recorder: recorder) { continuation.resume() } }
    }
    return LoadRunner.seconds(clock.now - started)
  }

  /// Closes the connections and ends the loop's thread.
  func close() {
    guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
    driver.execute { $0.closeAll() }
    loop.stopAndWait()
  }
}
