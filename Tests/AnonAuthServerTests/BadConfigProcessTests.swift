import Foundation
import Testing

/// The real binary: a bad setting is exactly one line on stderr and exit code 2, and
/// changes nothing on disk.
@Suite struct BadConfigProcessTests {
  @Test(arguments: [
    ["--dev", "--io-threads", "0"],
    ["--dev", "--bogus"],
    ["--dev", "--log-level"],
    ["--listen", "127.0.0.1:0"],
  ])
  func badSettingIsOneLineAndExitTwo(_ arguments: [String]) throws {
    let scratch = try Scratch()
    let dataDir = scratch.path + "/data"
    let result = try runDaemon(arguments + ["--data-dir", dataDir])
    #expect(result.status == 2)
    #expect(result.stderrLines.count == 1, "\(result.stderr)")
    #expect(result.stderr.hasPrefix("anonauthd: "))
    #expect(result.stdout.isEmpty)
    #expect(!FileManager.default.fileExists(atPath: dataDir))
  }

  @Test func badEnvironmentVariableToo() throws {
    let result = try runDaemon(["--dev"], environment: ["ANONAUTH_MAX_CONCURRENT_CALLS": "lots"])
    #expect(result.status == 2)
    #expect(
      result.stderrLines == [
        "anonauthd: --max-concurrent-calls: expected a whole number in 1...100000, got \"lots\""
      ])
  }

  /// Outside --dev, files that are named but missing or wrong are refused before the data
  /// dir is made.
  @Test func missingOrBadSecretFilesOutsideDev() throws {
    let scratch = try Scratch()
    let dataDir = scratch.path + "/data"
    let masterKey = try scratch.write("master.key", String(repeating: "ab", count: 32) + "\n")
    let shortKey = try scratch.write("short.key", "abcd\n")
    let notPEM = try scratch.write("cert.pem", "not a certificate\n")
    let cases: [([String], String)] = [
      (
        [
          "--tls-cert", scratch.path + "/none.pem", "--tls-key", scratch.path + "/none.key",
          "--master-key-file", masterKey,
        ],
        "TLS certificate"
      ),
      (["--tls-cert", notPEM, "--tls-key", notPEM, "--master-key-file", masterKey], "TLS certificate"),
      (
        ["--tls-cert", notPEM, "--tls-key", notPEM, "--master-key-file", scratch.path + "/none"],
        "--master-key-file"
      ),
      (["--tls-cert", notPEM, "--tls-key", notPEM, "--master-key-file", shortKey], "expected 64 hex digits"),
      (
        [
          "--tls-cert", notPEM, "--tls-key", notPEM, "--master-key-file", masterKey, "--admin-key-file",
          shortKey,
        ],
        "--admin-key-file"
      ),
    ]
    for (arguments, says) in cases {
      let result = try runDaemon(arguments + ["--data-dir", dataDir])
      #expect(result.status == 2, "\(arguments)")
      #expect(result.stderrLines.count == 1, "\(result.stderr)")
      #expect(result.stderr.contains(says), "\(result.stderr)")
      #expect(!result.stderr.contains("abcd"), "a key file's contents must never be echoed")
      #expect(!FileManager.default.fileExists(atPath: dataDir))
    }
  }

  @Test func helpAndPrintConfigExitZero() throws {
    let help = try runDaemon(["--help"])
    #expect(help.status == 0)
    #expect(help.stdout.contains("ANONAUTH_ADMIN_KEY_FILE"))
    let printed = try runDaemon(["--dev", "--print-config"], environment: ["ANONAUTH_LOG_LEVEL": "warn"])
    #expect(printed.status == 0)
    #expect(printed.stdout.contains("log-level=warn  # env"))
    #expect(printed.stderr.isEmpty)
  }
}
