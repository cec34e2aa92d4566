import AnonAuthRPCClient
import AnonAuthTestSupport
import AnonAuthWire
import Foundation
import Testing

/// A client given several endpoints (the daemons of a replicated deployment): a call that
/// an endpoint did not process goes to the next one.
@Suite struct FailoverTests {
  static let check = "/anonauth.v1.HealthService/Check"

  /// Two daemons sharing one certificate, as the nodes of one deployment do.
  private static func pair() async throws -> (DaemonProcess, DaemonProcess) {
    let first = try await DaemonProcess.start()
    let tls = first.dataDir.appendingPathComponent("tls")
    let second = try await DaemonProcess.start([
      "--tls-cert", tls.appendingPathComponent("dev-cert.pem").path,
      "--tls-key", tls.appendingPathComponent("dev-key.pem").path,
    ])
    return (first, second)
  }

  private static func client(_ addresses: [String], caFile: String) throws -> RPCClient {
    try RPCClient(
      endpoints: addresses.map { try ClientEndpoint(address: $0, caFile: caFile) }, defaultTimeoutMs: 10_000)
  }

  @Test func anEndpointThatIsDownIsSkipped() async throws {
    let (first, second) = try await Self.pair()
    // Nothing listens on the first address: the daemon there is gone.
    let gone = first.rpc
    #expect(await first.terminated() == 0)
    let client = try Self.client([gone, second.rpc], caFile: first.caFile)
    let response = try await client.call(Self.check, CheckRequest(), as: CheckResponse.self)
    #expect(response.status == "SERVING")
  }

  @Test func callsMoveToTheNextEndpointWhenTheirDaemonStops() async throws {
    let (first, second) = try await Self.pair()
    let client = try Self.client([first.rpc, second.rpc], caFile: first.caFile)
    for _ in 0..<5 { _ = try await client.call(Self.check, CheckRequest(), as: CheckResponse.self) }
    #expect(await first.terminated() == 0)
    for _ in 0..<5 {
      let response = try await client.call(Self.check, CheckRequest(), as: CheckResponse.self)
      #expect(response.status == "SERVING")
    }
    let metrics = try await OpsHTTP.get(second.ops, "/metrics")
    #expect(metrics.body.contains("anonauth_connections_total 1"))
  }

  @Test func withEveryEndpointDownTheCallIsUnavailable() async throws {
    let (first, second) = try await Self.pair()
    let addresses = [first.rpc, second.rpc]
    let firstStatus = await first.terminated()
    let secondStatus = await second.terminated()
    #expect(firstStatus == 0 && secondStatus == 0)
    let client = try Self.client(addresses, caFile: first.caFile)
    let error = await #expect(throws: RPCError.self) {
      try await client.call(Self.check, CheckRequest(), as: CheckResponse.self)
    }
    #expect(error?.code == .unavailable)
  }
}
