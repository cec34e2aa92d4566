import AnonAuthServer
import AnonAuthService
import Testing

/// `--uid-order`: Firebase's random uids unless the operator names the creation order.
@Suite struct ConfigUIDOrderTests {
  @Test func randomByDefaultCreationWhenNamed() throws {
    let (config, _) = try DaemonConfig.resolve(arguments: ["--dev"], environment: [:])
    #expect(config.uidOrder == .random)
    let (named, _) = try DaemonConfig.resolve(
      arguments: ["--dev", "--uid-order", "creation"], environment: [:])
    #expect(named.uidOrder == .creation)
    let (environment, _) = try DaemonConfig.resolve(
      arguments: ["--dev"], environment: ["ANONAUTH_UID_ORDER": "creation"])
    #expect(environment.uidOrder == .creation)
  }

  @Test(arguments: ["sorted", "Creation", ""])
  func refused(_ value: String) {
    #expect(configRefusal(["--dev", "--uid-order", value]).contains("--uid-order"))
  }
}
