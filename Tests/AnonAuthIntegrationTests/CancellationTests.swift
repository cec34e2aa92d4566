import AnonAuthRPCClient
import AnonAuthTestSupport
import AnonAuthWire
import Foundation
import Testing

/// Cancellation that is real, against the real daemon: an expired call is answered at
/// once but keeps its connection's slot until its handler has returned. (The deadline
/// floor is tested with raw frames in Tests/Interop/test_hostile_cancel.py: this client
/// keeps its own deadline too, and would give up before the floor.)
@Suite(.serialized) struct CancellationTests {
  static let check = "/anonauth.v1.HealthService/Check"
  static let sleep = "/anonauth.test.TestService/Sleep"

  /// Four handlers that do not notice cancellation, each past its 5 s deadline: all four
  /// are answered `DEADLINE_EXCEEDED`, and while they still run the connection (limit 4)
  /// refuses a fifth call with `TOO_MANY_CALLS`. Once they have returned, the same
  /// connection is served again. (Before, an expired call gave its slot back at once, so
  /// one connection could run any number of handlers.)
  @Test func expiredCallsKeepTheirSlotUntilTheirHandlerReturns() async throws {
    let daemon = try await DaemonProcess.start([
      "--test-hooks", "--max-concurrent-calls", "4", "--min-call-timeout-ms", "1",
    ])
    let client = try daemon.client()
    _ = try await client.call(Self.check, CheckRequest(), as: CheckResponse.self)  // connected
    // A deadline long enough that each handler has begun before it passes, on a busy
    // machine too (a call cancelled before its handler began gives its slot back at once,
    // as it should), and a sleep long enough that they still run when the fifth call comes.
    let sleepy = ["x-sleep-ms": "25000", "x-sleep-uncancellable": "1"]
    await withTaskGroup(of: Void.self) { group in
      for _ in 0..<4 {
        group.addTask {
          // The server's answer or the client's own timer: either way the deadline passed,
          // and the call reached the server (sent before the wait began).
          let error = await #expect(throws: RPCError.self) {
            _ = try await client.callRaw(Self.sleep, payload: [], metadata: sleepy, timeoutMs: 5000)
          }
          #expect(error?.code == .deadlineExceeded)
        }
      }
    }
    // The premise: the four tasks still run (each began its handler before its deadline).
    // On a badly overloaded machine a task may only start after its deadline; it then
    // returns at once (the router checks cancellation first) and rightly frees its slot.
    let running = try await Self.metric(daemon, "anonauth_rpc_handlers_running")
    let refused = try await client.send(Self.check, payload: [], metadata: [:], timeoutMs: 10_000)
    if running == 4 {
      #expect(refused.status?.code == StatusCode.resourceExhausted.rawValue)
      #expect(refused.status?.reason == "TOO_MANY_CALLS")
    } else {
      #expect(running < 4, "more handlers than slots: \(running)")
    }
    // A bystander on its own connection is served meanwhile.
    let bystander = try daemon.client()
    let served = try await bystander.call(Self.check, CheckRequest(), as: CheckResponse.self)
    #expect(served.status == "SERVING")
    // The handlers return after their 25 s; then the slots are free again.
    var answered = false
    for _ in 0..<600 where !answered {
      try await Task.sleep(for: .milliseconds(100))
      let reply = try await client.send(Self.check, payload: [], metadata: [:], timeoutMs: 10_000)
      answered = reply.status?.code ?? 0 == 0
    }
    #expect(answered)
    let metrics = try await OpsHTTP.get(daemon.ops, "/metrics").body
    // Never more than the 4 slots plus the bystander's and the probes' one at a time.
    let peak = metrics.split(separator: "\n").first { $0.hasPrefix("anonauth_rpc_handlers_running_peak ") }
    let value = peak.flatMap { Int($0.split(separator: " ").last ?? "") } ?? -1
    #expect((4...6).contains(value), "peak: \(value)")
  }

  /// One unlabelled series of the ops port's /metrics, or -1.
  static func metric(_ daemon: DaemonProcess, _ name: String) async throws -> Int {
    let body = try await OpsHTTP.get(daemon.ops, "/metrics").body
    let line = body.split(separator: "\n").first { $0.hasPrefix(name + " ") }
    return line.flatMap { Int($0.split(separator: " ").last ?? "") } ?? -1
  }
}
