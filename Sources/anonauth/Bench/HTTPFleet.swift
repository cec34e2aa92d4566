import AnonAuthNet
import Dispatch
import Foundation
import Synchronization

/// The HTTPS side of a bench: keep-alive HTTP/1.1 connections, each driven by a thread of
/// its own with one request in flight (all HTTP/1.1 allows without pipelining), opened and
/// warmed up before any timing and kept open across rounds, as the native bench keeps its
/// connections. Threads rather than tasks: each blocks in `poll` on its own socket, so the
/// cooperative pool (which runs the native side's tasks) is never held up by them.
final class HTTPFleet: Sendable {
  /// Where the connections go and how.
  struct Target: Sendable {
    let host: String
    let port: UInt16
    let context: TLSContext
    let timeoutMs: Int
  }

  /// What one round runs: requests until `end`, recorded in `recorder`.
  private struct Round: Sendable {
    let end: ContinuousClock.Instant
    let recorder: LatencyRecorder
  }

  let count: Int
  private let target: Target
  private let request: @Sendable () -> [UInt8]
  private let failureReason: @Sendable (HTTPResponse) -> String?
  private let go = DispatchSemaphore(value: 0)
  private let ready = DispatchGroup()
  private let done = DispatchGroup()
  /// The round under way; nil tells the threads to close their connections and end.
  private let round = Mutex<Round?>(nil)
  private let setupFailure = Mutex<String?>(nil)
  private let reconnectCount = Atomic<Int>(0)

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
    self.target = target
    self.count = count
    self.request = request
    self.failureReason = failureReason
    for _ in 0..<count {
      ready.enter()
      let thread = Thread { [self] in drive() }
      thread.name = "bench-http"
      thread.start()
    }
    await wait(for: ready)
    if let failure = setupFailure.withLock({ $0 }) {
      close()
      throw .failed("HTTP warm-up failed: \(failure)")
    }
  }

  /// Connections reopened during rounds because the server closed one or a call failed.
  var reconnects: Int { reconnectCount.load(ordering: .relaxed) }

  /// Runs every connection for `seconds`; returns the wall time.
  func run(seconds: Int, recorder: LatencyRecorder) async -> Double {
    let clock = ContinuousClock()
    let started = clock.now
    round.withLock { $0 = Round(end: started + .seconds(seconds), recorder: recorder) }
    for _ in 0..<count {
      done.enter()
      go.signal()
    }
    await wait(for: done)
    return LoadRunner.seconds(clock.now - started)
  }

  /// Ends the threads; their connections close as they go.
  func close() {
    round.withLock { $0 = nil }
    for _ in 0..<count { go.signal() }
  }

  private func wait(for group: DispatchGroup) async {
    await withCheckedContinuation { continuation in
      group.notify(queue: .global()) { continuation.resume() }
    }
  }

  /// One connection's thread: open and warm up, then one round per `go`.
  private func drive() {
    var connection: KeepAliveHTTPSConnection?
    do {
      let opened = try open()
      let response = try opened.exchange(request(), timeoutMs: target.timeoutMs)
      if let reason = failureReason(response) {
        setupFailure.withLock { if $0 == nil { $0 = "HTTP \(response.status) \(reason)" } }
      }
      connection = opened
    } catch {
      setupFailure.withLock { if $0 == nil { $0 = error.description } }
    }
    ready.leave()
    while true {
      go.wait()
      guard let current = round.withLock({ $0 }) else { return }
      while ContinuousClock.now < current.end {
        if connection?.isOpen != true {
          connection = try? open()
          reconnectCount.add(1, ordering: .relaxed)
          guard connection != nil else {
            current.recorder.fail(reason: "HTTP_CONNECT", detail: "cannot reopen a connection")
            Thread.sleep(forTimeInterval: 0.01)
            continue
          }
        }
        guard let open = connection else { continue }
        call(on: open, recorder: current.recorder)
      }
      done.leave()
    }
  }

  private func call(on connection: KeepAliveHTTPSConnection, recorder: LatencyRecorder) {
    let bytes = request()
    let start = ContinuousClock.now
    do {
      let response = try connection.exchange(bytes, timeoutMs: target.timeoutMs)
      if let reason = failureReason(response) {
        recorder.fail(reason: reason, detail: "HTTP \(response.status): \(reason)")
      } else {
        recorder.record(nanos: LoadRunner.nanos(ContinuousClock.now - start))
      }
    } catch {
      recorder.fail(reason: "HTTP_TRANSPORT", detail: error.description)
    }
  }

  private func open() throws(HTTPClientError) -> KeepAliveHTTPSConnection {
    try KeepAliveHTTPSConnection(
      host: target.host, port: target.port, context: target.context, timeoutMs: target.timeoutMs)
  }
}
