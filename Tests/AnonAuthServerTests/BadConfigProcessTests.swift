import Foundation
import Glibc
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
    for file in [masterKey, shortKey, notPEM] { chmod(file, 0o600) }
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

  /// A secret file that group or others may read or write stops the start: one line
  /// naming the file, its mode and the chmod to run, exit 2, nothing made on disk. With
  /// --dev too: only the files --dev makes in the data dir are its own to tighten.
  @Test func secretFilesOpenToOthersAreRefused() throws {
    let scratch = try Scratch()
    let dataDir = scratch.path + "/data"
    let key = String(repeating: "ab", count: 32) + "\n"
    let masterKey = try scratch.write("master.key", key)
    let adminKey = try scratch.write("admin.key", key)
    let tlsKey = try scratch.write("tls.key", "not a key\n")
    let cert = try scratch.write("cert.pem", "not a certificate\n")
    let files = ["--tls-cert", cert, "--tls-key", tlsKey, "--master-key-file", masterKey]
    let cases: [(open: String, mode: mode_t, arguments: [String], flag: String, verb: String)] = [
      (masterKey, 0o644, files, "--master-key-file", "read"),
      (masterKey, 0o620, files, "--master-key-file", "write"),
      (adminKey, 0o640, files + ["--admin-key-file", adminKey], "--admin-key-file", "read"),
      (tlsKey, 0o666, files, "--tls-key", "write"),
      // An ops address no interface has: a daemon that took the key would stop there, not serve.
      (
        masterKey, 0o604,
        ["--dev", "--master-key-file", masterKey, "--listen", "127.0.0.1:0", "--ops-listen", "192.0.2.1:1"],
        "--master-key-file", "read"
      ),
    ]
    for (open, mode, arguments, flag, verb) in cases {
      for file in [masterKey, adminKey, tlsKey] { chmod(file, 0o600) }
      chmod(open, mode)
      let result = try runDaemon(arguments + ["--data-dir", dataDir])
      #expect(result.status == 2, "\(arguments)")
      #expect(
        result.stderrLines == [
          "anonauthd: \(flag) \(open): mode \(String(mode, radix: 8)) lets group or others \(verb) this secret;"
            + " run: chmod 600 \(open)"
        ])
      // Outside --dev the secrets are read before the data dir is made.
      if !arguments.contains("--dev") { #expect(!FileManager.default.fileExists(atPath: dataDir)) }
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
