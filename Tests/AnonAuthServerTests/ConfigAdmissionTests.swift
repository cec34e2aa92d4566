import AnonAuthServer
import AnonAuthService
import Testing

/// The fair-admission flags: their defaults, flag over environment, 0 turns a rate off,
/// the ranges.
@Suite struct ConfigAdmissionTests {
  @Test func defaults() throws {
    let (config, _) = try DaemonConfig.resolve(arguments: ["--dev"], environment: [:])
    #expect(config.admission == AdmissionLimits())
    #expect(config.admission.password == .init(perIP: 2, perProject: 100))
    #expect(config.admission.signing == .init(perIP: 20, perProject: 2000))
    #expect(config.admission.write == .init(perIP: 20, perProject: 2000))
    #expect(config.admission.ipSharePercent == 12)
    #expect(config.admission.projectSharePercent == 50)
  }

  @Test func flagBeatsEnvironmentAndZeroTurnsARateOff() throws {
    let (config, _) = try DaemonConfig.resolve(
      arguments: [
        "--dev", "--password-rate-per-ip", "0", "--signing-rate-per-project", "7",
        "--admission-ip-share-percent",
        "100",
      ],
      environment: ["ANONAUTH_PASSWORD_RATE_PER_IP": "9", "ANONAUTH_WRITE_RATE_PER_IP": "3"])
    #expect(config.admission.password.perIP == 0)
    #expect(config.admission.signing.perProject == 7)
    #expect(config.admission.write.perIP == 3)
    #expect(config.admission.ipSharePercent == 100)
  }

  @Test(arguments: [
    ("password-rate-per-ip", "-1"), ("write-rate-per-project", "1000001"),
    ("admission-ip-share-percent", "0"),
    ("admission-project-share-percent", "101"), ("signing-rate-per-ip", "fast"),
  ])
  func refused(_ flag: String, _ value: String) {
    #expect(configRefusal(["--dev", "--\(flag)", value]).contains("--\(flag)"))
  }
}
