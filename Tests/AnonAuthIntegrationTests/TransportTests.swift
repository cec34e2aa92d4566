import AnonAuthRPCClient
import AnonAuthTestSupport
import AnonAuthWire
import Foundation
import Testing

/// The transport against the real daemon over real TLS.
@Suite(.serialized) struct TransportTests {
  static let check = "/anonauth.v1.HealthService/Check"

  @Test func healthIsServing() async throws {
    let daemon = try await DaemonProcess.start()
    let client = try daemon.client()
    let response = try await client.call(Self.check, CheckRequest(), as: CheckResponse.self)
    #expect(response.status == "SERVING")
  }

  @Test func thousandCallsOverEightConnectionsAllAnsweredAndMatched() async throws {
    let daemon = try await DaemonProcess.start()
    let clients = try (0..<8).map { _ in try daemon.client() }
    let results = try await withThrowingTaskGroup(of: (Int, String?).self) { group in
      for i in 0..<1000 {
        let client = clients[i % 8]
        group.addTask {
          let reply = try await client.send(
            Self.check, payload: CheckRequest().serializedBytes(), metadata: ["x-request-id": "req-\(i)"],
            timeoutMs: 20_000)
          // The reply carries the request id of its own call: ids were matched right.
          return (i, reply.metadata["x-request-id"])
        }
      }
      var seen: [Int: String?] = [:]
      for try await (i, echoed) in group { seen[i] = echoed }
      return seen
    }
    #expect(results.count == 1000)
    for i in 0..<1000 { #expect(results[i] == "req-\(i)") }
  }

  // The unknown method, a malformed payload, request ids and the deadline are the core's
  // rules, the same on every transport: AnonAuthServerTests' InProcessCoreTests test
  // them without a socket.

  /// Also the service group's order on the real daemon: its debug log names each service
  /// as it starts and as it stops, and the stop is the start reversed, between `draining`
  /// and `stopped`.
  @Test func sigtermLetsCallsInFlightFinishThenExitsZero() async throws {
    let daemon = try await DaemonProcess.start(["--test-hooks", "--log-level", "debug"])
    let client = try daemon.client()
    let calls = (0..<5).map { _ in
      Task {
        try await client.send(
          "/anonauth.test.TestService/Sleep", payload: [], metadata: ["x-sleep-ms": "800"], timeoutMs: 10_000)
      }
    }
    try await Task.sleep(for: .milliseconds(300))  // the calls are on the server now
    daemon.process.signal(SIGTERM)
    for call in calls {
      let reply = try await call.value
      #expect(reply.status?.code ?? 0 == 0)
    }
    #expect(daemon.process.wait() == 0)
    #expect(daemon.log.contains("\"msg\":\"stopped\""))
    let lifecycle = daemon.log.split(separator: "\n").compactMap { line -> String? in
      guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
        let message = object["msg"] as? String
      else { return nil }
      switch message {
      case "service started", "service stopped": return "\(message.dropFirst(8)) \(object["service"] ?? "")"
      case "draining", "stopped": return message
      default: return nil
      }
    }
    let started = [
      "cluster node", "store", "signing pool", "outbound HTTPS", "mail worker", "clean-up worker",
      "ops server", "rpc server", "TLS reload", "readiness",
    ]
    #expect(
      lifecycle
        == started.map { "started \($0)" } + ["draining"] + started.reversed().map { "stopped \($0)" }
        + ["stopped"])
  }

  @Test func clientReconnectsAfterGoAway() async throws {
    let daemon = try await DaemonProcess.start(["--idle-timeout-ms", "300"])
    let client = try daemon.client()
    _ = try await client.call(Self.check, CheckRequest(), as: CheckResponse.self)
    try await Task.sleep(for: .milliseconds(900))  // the server said GoAway IDLE_TIMEOUT and closed
    let response = try await client.call(Self.check, CheckRequest(), as: CheckResponse.self)
    #expect(response.status == "SERVING")
    // Two connections: the first was closed by the server, the second made for the call.
    let metrics = try await OpsHTTP.get(daemon.ops, "/metrics")
    #expect(metrics.body.contains("anonauth_connections_total 2"))
  }

  @Test func wrongCAFailsTheHandshake() async throws {
    let daemon = try await DaemonProcess.start()
    let other = try await DaemonProcess.start()
    let client = try RPCClient(endpoint: ClientEndpoint(address: daemon.rpc, caFile: other.caFile))
    let error = await #expect(throws: RPCError.self) {
      _ = try await client.call(Self.check, CheckRequest(), as: CheckResponse.self)
    }
    #expect(error?.code == .unavailable)
  }
}
