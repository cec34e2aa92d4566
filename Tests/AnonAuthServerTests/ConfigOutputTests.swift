import Testing

@testable import AnonAuthServer

/// `--help` and `--print-config`.
@Suite struct ConfigOutputTests {
  @Test func helpListsEverySettingWithItsVariableAndDefault() {
    let help = DaemonConfig.helpText()
    for setting in Setting.all {
      #expect(help.contains("  \(setting.flag)"), "\(setting.name)")
      #expect(help.contains("env \(setting.environmentName);"), "\(setting.name)")
    }
    #expect(help.contains("env ANONAUTH_LISTEN; default: 127.0.0.1:7443"))
    #expect(help.contains("env ANONAUTH_MASTER_KEY_FILE; default: (none)"))
    #expect(help.contains("SIGHUP"))
  }

  @Test func printConfigShowsEveryValueAndItsSource() throws {
    let (config, _) = try DaemonConfig.resolve(
      arguments: ["--dev", "--log-level", "debug"], environment: ["ANONAUTH_IO_THREADS": "2"])
    let lines = config.printableConfig().split(separator: "\n")
    #expect(lines.count == Setting.all.count)
    #expect(lines.contains("log-level=debug  # flag"))
    #expect(lines.contains("io-threads=2  # env"))
    #expect(lines.contains("listen=127.0.0.1:7443  # default"))
    #expect(lines.contains("master-key-file=(none)  # default"))
  }

  @Test func secretSettingsAreMasked() {
    let secret = Setting("some-token", nil, "a secret given inline", isSecret: true)
    let plain = Setting("listen", nil, "where")
    let text = DaemonConfig.printable([
      (secret, "s3cr3t-value", "env"), (plain, "127.0.0.1:1", "flag"), (secret, "", "default"),
    ])
    #expect(!text.contains("s3cr3t-value"))
    #expect(text.contains("some-token=****  # env"))
    #expect(text.contains("listen=127.0.0.1:1  # flag"))
    #expect(text.contains("some-token=  # default"))
  }

  @Test func noSettingHoldsASecretInline() {
    // Secrets travel as files (master key, TLS key, admin key): only paths are settings.
    #expect(Setting.all.filter(\.isSecret).isEmpty)
    for name in ["master-key-file", "tls-key", "admin-key-file"] {
      #expect(Setting.all.contains { $0.name == name })
    }
  }
}
