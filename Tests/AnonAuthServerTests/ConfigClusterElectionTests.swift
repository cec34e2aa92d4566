import Testing

@testable import AnonAuthServer

/// `--cluster-election-timeout-ms`: Raft's election timeout, handed to libdqlite as the
/// network latency it derives the timeout (15 times) and the heartbeat from.
@Suite struct ConfigClusterElectionTests {
  let base = [
    "--tls-cert", "c.pem", "--tls-key", "k.pem", "--master-key-file", "m.key", "--cluster-id", "1",
    "--cluster-listen", "127.0.0.1:9001", "--cluster-insecure",
  ]

  @Test func theDefaultIsOneAndAHalfSecondsAHundredMillisecondsOfLatency() throws {
    let (config, _) = try DaemonConfig.resolve(arguments: base, environment: [:])
    #expect(config.cluster?.electionTimeoutMs == 1_500)
    #expect(config.cluster?.networkLatencyMs == 100)
  }

  @Test func theFlagAndTheEnvironmentSetIt() throws {
    let (flag, _) = try DaemonConfig.resolve(
      arguments: base + ["--cluster-election-timeout-ms", "3000"], environment: [:])
    #expect(flag.cluster?.electionTimeoutMs == 3_000)
    #expect(flag.cluster?.networkLatencyMs == 200)
    let (variable, _) = try DaemonConfig.resolve(
      arguments: base, environment: ["ANONAUTH_CLUSTER_ELECTION_TIMEOUT_MS": "150"])
    #expect(variable.cluster?.networkLatencyMs == 10)
  }

  @Test(arguments: ["149", "60001", "0", "soon"])
  func aTimeoutOutsideItsRangeIsRefusedNamingTheFlag(_ value: String) {
    #expect {
      _ = try DaemonConfig.resolve(
        arguments: base + ["--cluster-election-timeout-ms", value], environment: [:])
    } throws: { error in
      "\(error)".contains("--cluster-election-timeout-ms")
    }
  }
}
