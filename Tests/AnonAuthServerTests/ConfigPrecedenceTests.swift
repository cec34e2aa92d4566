import AnonAuthServer
import AnonAuthService
import Testing

/// flag > ANONAUTH_* environment > JSON file (--config) > default, one level at a time.
@Suite struct ConfigPrecedenceTests {
  /// The effective `io-threads` and where it came from.
  private func ioThreads(_ arguments: [String], _ environment: [String: String]) throws -> (Int, String?) {
    let (config, action) = try DaemonConfig.resolve(
      arguments: ["--dev"] + arguments, environment: environment)
    #expect(action == .run)
    let source = config.resolved.first { $0.setting.name == "io-threads" }?.source
    return (config.rpc.ioThreads, source)
  }

  @Test func flagBeatsEnvironment() throws {
    let scratch = try Scratch()
    let file = try scratch.write("c.json", #"{"io-threads": 5}"#)
    let got = try ioThreads(["--io-threads", "3", "--config", file], ["ANONAUTH_IO_THREADS": "4"])
    #expect(got == (3, "flag"))
  }

  @Test func environmentBeatsFile() throws {
    let scratch = try Scratch()
    let file = try scratch.write("c.json", #"{"io-threads": 5}"#)
    let got = try ioThreads(["--config", file], ["ANONAUTH_IO_THREADS": "4"])
    #expect(got == (4, "env"))
  }

  @Test func fileBeatsDefault() throws {
    let scratch = try Scratch()
    let file = try scratch.write("c.json", #"{"io-threads": 5}"#)
    #expect(try ioThreads(["--config", file], [:]) == (5, "file"))
  }

  @Test func defaultWhenNothingSaysOtherwise() throws {
    #expect(try ioThreads([], [:]) == (1, "default"))
  }

  @Test func configFileNamedByTheEnvironment() throws {
    let scratch = try Scratch()
    let file = try scratch.write("c.json", #"{"log-level": "debug", "dev": true, "listen": "127.0.0.1:9"}"#)
    let (config, _) = try DaemonConfig.resolve(arguments: [], environment: ["ANONAUTH_CONFIG": file])
    #expect(config.dev)
    #expect(config.logLevel == .debug)
    #expect(config.listen.description == "127.0.0.1:9")
  }

  @Test func equalsFormAndSwitches() throws {
    let (config, _) = try DaemonConfig.resolve(
      arguments: [
        "--dev", "--log-level=warn", "--test-hooks", "--trusted-proxies=10.0.0.0/8, 192.168.0.0/16",
      ],
      environment: ["ANONAUTH_DEV": "false"])
    #expect(config.dev)  // the flag beats the variable for switches too
    #expect(config.testHooks)
    #expect(config.logLevel == .warning)
    #expect(config.trustedProxies == ["10.0.0.0/8", "192.168.0.0/16"])
  }

  @Test func everyRPCSettingReachesTheServerConfig() throws {
    let (config, _) = try DaemonConfig.resolve(
      arguments: [
        "--dev", "--max-frame-size", "2048", "--max-concurrent-calls", "7", "--handshake-timeout-ms", "11",
        "--frame-timeout-ms", "12", "--idle-timeout-ms", "13", "--call-timeout-ms", "14",
        "--shutdown-grace-ms", "0",
      ], environment: [:])
    #expect(config.rpc.maxFrameSize == 2048)
    #expect(config.rpc.maxConcurrentCallsPerConnection == 7)
    #expect(config.rpc.handshakeTimeoutMs == 11)
    #expect(config.rpc.partialFrameTimeoutMs == 12)
    #expect(config.rpc.idleTimeoutMs == 13)
    #expect(config.rpc.defaultCallTimeoutMs == 14)
    #expect(config.rpc.shutdownGraceMs == 0)
  }

  @Test func nonDevWithEveryFileIsAccepted() throws {
    let (config, _) = try DaemonConfig.resolve(
      arguments: ["--tls-cert", "/c.pem", "--tls-key", "/k.pem"],
      environment: ["ANONAUTH_MASTER_KEY_FILE": "/m.key", "ANONAUTH_ADMIN_KEY_FILE": "/a.key"])
    #expect(!config.dev)
    #expect(config.tlsCert == "/c.pem")
    #expect(config.masterKeyFile == "/m.key")
    #expect(config.adminKeyFile == "/a.key")
  }

  @Test func helpAndPrintConfigAreActions() throws {
    #expect(try DaemonConfig.resolve(arguments: ["--dev", "--help"], environment: [:]).1 == .help)
    #expect(
      try DaemonConfig.resolve(arguments: ["--dev", "--print-config"], environment: [:]).1 == .printConfig)
  }
}
