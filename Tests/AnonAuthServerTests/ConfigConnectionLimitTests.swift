import AnonAuthServer
import Testing

/// `--max-connections`, `--max-connections-per-ip` and `--max-connection-rate-per-ip`:
/// defaults, flag and environment, range checks, and the trusted proxies being exempt
/// from the per-IP limits.
@Suite struct ConfigConnectionLimitTests {
  @Test func defaults() throws {
    let (config, _) = try DaemonConfig.resolve(arguments: ["--dev"], environment: [:])
    #expect(config.rpc.maxConnections == 10_000)
    #expect(config.rpc.maxConnectionsPerIP == 256)
    #expect(config.rpc.maxConnectionRatePerIP == 64)
    #expect(config.rpc.perIPExempt.isEmpty)
  }

  @Test func flagsAndEnvironment() throws {
    let (fromFlags, _) = try DaemonConfig.resolve(
      arguments: ["--dev", "--max-connections", "30", "--max-connections-per-ip", "20"], environment: [:])
    #expect(fromFlags.rpc.maxConnections == 30)
    #expect(fromFlags.rpc.maxConnectionsPerIP == 20)
    let (fromEnvironment, _) = try DaemonConfig.resolve(
      arguments: ["--dev"],
      environment: ["ANONAUTH_MAX_CONNECTIONS": "40", "ANONAUTH_MAX_CONNECTIONS_PER_IP": "7"])
    #expect(fromEnvironment.rpc.maxConnections == 40)
    #expect(fromEnvironment.rpc.maxConnectionsPerIP == 7)
    let (paced, _) = try DaemonConfig.resolve(
      arguments: ["--dev", "--max-connection-rate-per-ip", "0"],
      environment: ["ANONAUTH_MAX_CONNECTION_RATE_PER_IP": "9"])
    #expect(paced.rpc.maxConnectionRatePerIP == 0)  // the flag wins; 0 turns pacing off
    let (pacedByEnvironment, _) = try DaemonConfig.resolve(
      arguments: ["--dev"], environment: ["ANONAUTH_MAX_CONNECTION_RATE_PER_IP": "9"])
    #expect(pacedByEnvironment.rpc.maxConnectionRatePerIP == 9)
  }

  @Test(arguments: [
    (["--dev", "--max-connections", "0"], "--max-connections: expected a whole number"),
    (["--dev", "--max-connections", "many"], "--max-connections: expected a whole number"),
    (["--dev", "--max-connections-per-ip", "0"], "--max-connections-per-ip: expected a whole number"),
    (["--dev", "--max-connection-rate-per-ip", "-1"], "--max-connection-rate-per-ip: expected a whole"),
    (["--dev", "--max-connection-rate-per-ip", "fast"], "--max-connection-rate-per-ip: expected a whole"),
  ])
  func refused(_ arguments: [String], _ says: String) {
    #expect(configRefusal(arguments).contains(says))
  }

  @Test func trustedProxiesAreExemptFromThePerIPLimit() throws {
    let (config, _) = try DaemonConfig.resolve(
      arguments: ["--dev", "--trusted-proxies", "10.0.0.0/8, 127.0.0.3/32"], environment: [:])
    #expect(config.rpc.perIPExempt.map(\.description) == ["10.0.0.0/8", "127.0.0.3/32"])
  }
}
