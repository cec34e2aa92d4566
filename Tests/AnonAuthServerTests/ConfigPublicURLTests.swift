import AnonAuthServer
import Testing

/// `--public-url`: the issuer base as given, without its trailing slash; in `--dev` the
/// RPC port's address unless `--public-url` or `--issuer-prefix` was set; refused when it
/// is not an https URL.
@Suite struct ConfigPublicURLTests {
  @Test func devNamesItsOwnAddressUnlessAnIssuerWasChosen() throws {
    let (dev, _) = try DaemonConfig.resolve(arguments: ["--dev"], environment: [:])
    #expect(dev.publicURL == nil && dev.publicURLFromListenAddress)
    let (prefixed, _) = try DaemonConfig.resolve(
      arguments: ["--dev"], environment: ["ANONAUTH_ISSUER_PREFIX": "https://securetoken.google.com/"])
    #expect(!prefixed.publicURLFromListenAddress)
    let (given, _) = try DaemonConfig.resolve(
      arguments: ["--dev", "--public-url", "https://auth.example.com/"], environment: [:])
    #expect(given.publicURL == "https://auth.example.com" && !given.publicURLFromListenAddress)
  }

  @Test func outsideDevThereIsNoneUnlessGiven() throws {
    let (config, _) = try DaemonConfig.resolve(
      arguments: ["--tls-cert", "c.pem", "--tls-key", "k.pem", "--master-key-file", "m.key"], environment: [:]
    )
    #expect(config.publicURL == nil && !config.publicURLFromListenAddress)
  }

  @Test(arguments: ["http://auth.example.com", "auth.example.com", "https://h/?x=1"])
  func refused(_ value: String) {
    #expect(configRefusal(["--dev", "--public-url", value]).contains("--public-url"))
  }
}
