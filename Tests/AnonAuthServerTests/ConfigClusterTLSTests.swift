import Testing

@testable import AnonAuthServer

/// The cluster port's protection from the flags: mutual TLS with the three files,
/// plaintext only with `--cluster-insecure`, certificates made in `--dev`, and nothing
/// else starts.
@Suite struct ConfigClusterTLSTests {
  let base = [
    "--tls-cert", "c.pem", "--tls-key", "k.pem", "--master-key-file", "m.key", "--cluster-id", "1",
    "--cluster-listen", "127.0.0.1:9001",
  ]

  @Test func theThreeFilesTurnMutualTLSOn() throws {
    let (config, _) = try DaemonConfig.resolve(
      arguments: base + [
        "--cluster-ca-file", "ca.crt", "--cluster-cert-file", "n.crt", "--cluster-key-file", "n.key",
      ],
      environment: [:])
    #expect(
      config.cluster?.tls
        == .files(ClusterTLSFiles(caFile: "ca.crt", certificateFile: "n.crt", keyFile: "n.key")))
  }

  @Test func withoutFilesOrTheInsecureFlagTheDaemonRefusesNamingTheFlags() {
    #expect {
      _ = try DaemonConfig.resolve(arguments: base, environment: [:])
    } throws: { error in
      "\(error)".contains("--cluster-ca-file") && "\(error)".contains("--cluster-insecure")
    }
  }

  @Test func someFilesButNotAllAreRefused() {
    #expect(throws: ConfigError.self) {
      _ = try DaemonConfig.resolve(arguments: base + ["--cluster-ca-file", "ca.crt"], environment: [:])
    }
  }

  @Test func insecureComesFromTheFlagOrTheEnvironmentAndExcludesTheFiles() throws {
    let (flag, _) = try DaemonConfig.resolve(arguments: base + ["--cluster-insecure"], environment: [:])
    #expect(flag.cluster?.tls == .insecure)
    let (variable, _) = try DaemonConfig.resolve(
      arguments: base, environment: ["ANONAUTH_CLUSTER_INSECURE": "true"])
    #expect(variable.cluster?.tls == .insecure)
    #expect(throws: ConfigError.self) {
      _ = try DaemonConfig.resolve(
        arguments: base + [
          "--cluster-insecure", "--cluster-ca-file", "a", "--cluster-cert-file", "b", "--cluster-key-file",
          "c",
        ], environment: [:])
    }
  }

  @Test func devMakesItsOwnCertificates() throws {
    let (config, _) = try DaemonConfig.resolve(
      arguments: [
        "--dev", "--master-key-file", "m.key", "--cluster-id", "2", "--cluster-listen", "127.0.0.1:9002",
      ],
      environment: [:])
    #expect(config.cluster?.tls == .development)
  }

  @Test func theTLSFlagsNeedACluster() {
    #expect(throws: ConfigError.self) {
      _ = try DaemonConfig.resolve(arguments: ["--dev", "--cluster-insecure"], environment: [:])
    }
  }
}
