import AnonAuthServer
import Testing

/// `--commit-delay-us`: the default, flag over environment, 0 allowed, the range.
@Suite struct ConfigCommitDelayTests {
  @Test func defaultIsOneMillisecond() throws {
    let (config, _) = try DaemonConfig.resolve(arguments: ["--dev"], environment: [:])
    #expect(config.commitDelayMicroseconds == 1_000)
  }

  @Test func flagBeatsEnvironmentAndZeroTurnsItOff() throws {
    let (fromFlag, _) = try DaemonConfig.resolve(
      arguments: ["--dev", "--commit-delay-us", "0"], environment: ["ANONAUTH_COMMIT_DELAY_US": "2500"])
    #expect(fromFlag.commitDelayMicroseconds == 0)
    let (fromEnvironment, _) = try DaemonConfig.resolve(
      arguments: ["--dev"], environment: ["ANONAUTH_COMMIT_DELAY_US": "2500"])
    #expect(fromEnvironment.commitDelayMicroseconds == 2_500)
  }

  @Test(arguments: ["-1", "100001", "1ms"])
  func refused(_ value: String) {
    #expect(configRefusal(["--dev", "--commit-delay-us", value]).contains("--commit-delay-us"))
  }
}
