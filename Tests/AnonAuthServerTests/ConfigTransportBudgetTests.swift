import AnonAuthNet
import Testing

@testable import AnonAuthServer

/// `--min-call-timeout-ms`, `--max-unauthenticated-frame-size`, `--max-buffered-bytes`
/// and `--max-buffered-bytes-per-ip`: defaults, flag and environment, range checks, and
/// budgets that could never hold one frame of the largest size refused at start.
@Suite struct ConfigTransportBudgetTests {
  @Test func defaults() throws {
    let (config, _) = try DaemonConfig.resolve(arguments: ["--dev"], environment: [:])
    #expect(config.rpc.minCallTimeoutMs == 50)
    #expect(config.rpc.maxUnauthenticatedFrameSize == 64 * 1024)
    #expect(config.rpc.maxBufferedBytes == 256 * 1024 * 1024)
    #expect(config.rpc.maxBufferedBytesPerIP == 32 * 1024 * 1024)
  }

  @Test func flagsAndEnvironment() throws {
    let (config, _) = try DaemonConfig.resolve(
      arguments: [
        "--dev", "--min-call-timeout-ms", "250", "--max-unauthenticated-frame-size", "2048",
        "--max-buffered-bytes", "104857600",
      ],
      environment: ["ANONAUTH_MAX_BUFFERED_BYTES_PER_IP": "16777216", "ANONAUTH_MIN_CALL_TIMEOUT_MS": "9"])
    #expect(config.rpc.minCallTimeoutMs == 250)  // the flag wins
    #expect(config.rpc.maxUnauthenticatedFrameSize == 2048)
    #expect(config.rpc.maxBufferedBytes == 100 * 1024 * 1024)
    #expect(config.rpc.maxBufferedBytesPerIP == 16 * 1024 * 1024)
  }

  @Test(arguments: [
    (["--dev", "--min-call-timeout-ms", "0"], "--min-call-timeout-ms: expected a whole number"),
    (
      ["--dev", "--max-unauthenticated-frame-size", "10"],
      "--max-unauthenticated-frame-size: expected a whole"
    ),
    (["--dev", "--max-buffered-bytes", "lots"], "--max-buffered-bytes: expected a whole number"),
    (["--dev", "--max-buffered-bytes-per-ip", "4194304"], "--max-buffered-bytes-per-ip: at least twice"),
    (
      ["--dev", "--max-buffered-bytes", "16777216", "--max-buffered-bytes-per-ip", "33554432"],
      "--max-buffered-bytes: at least --max-buffered-bytes-per-ip"
    ),
  ])
  func refused(_ arguments: [String], _ says: String) {
    let said = configRefusal(arguments)
    #expect(said.contains(says), "\(said)")
  }

  /// The deadline a call gets: 0 is the default, anything under the floor the floor.
  @Test func theDeadlineFloor() throws {
    var config = RPCServerConfig(listen: try SocketAddress(host: "127.0.0.1", port: 0))
    config.minCallTimeoutMs = 50
    config.defaultCallTimeoutMs = 30_000
    #expect(config.effectiveTimeoutMs(requested: 0) == 30_000)
    #expect(config.effectiveTimeoutMs(requested: 1) == 50)
    #expect(config.effectiveTimeoutMs(requested: 50) == 50)
    #expect(config.effectiveTimeoutMs(requested: 51) == 51)
  }
}
