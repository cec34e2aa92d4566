import AnonAuthServer
import Foundation
import Testing

/// Every way a setting can be wrong: a `ConfigError` of one line that names the problem.
@Suite struct ConfigValidationTests {
  /// `configRefusal`'s text, which must be one line.
  private func refusal(
    _ arguments: [String], environment: [String: String] = [:],
    sourceLocation: SourceLocation = #_sourceLocation
  ) -> String {
    let said = configRefusal(arguments, environment: environment, sourceLocation: sourceLocation)
    #expect(!said.contains("\n"), sourceLocation: sourceLocation)
    return said
  }

  static let cases: [(arguments: [String], environment: [String: String], says: String)] = [
    (["--dev", "--listen", "nowhere"], [:], "--listen:"),
    (["--dev", "--ops-listen", "127.0.0.1:99999"], [:], "--ops-listen:"),
    (["--dev"], ["ANONAUTH_LISTEN": "256.0.0.1:1"], "--listen:"),
    (["--dev", "--io-threads", "0"], [:], "--io-threads: expected a whole number in 1...64, got \"0\""),
    (["--dev", "--io-threads", "65"], [:], "--io-threads: expected a whole number in 1...64"),
    (["--dev", "--max-frame-size", "12"], [:], "--max-frame-size: expected a whole number in 1024..."),
    (["--dev", "--idle-timeout-ms", "soon"], [:], "--idle-timeout-ms: expected a whole number"),
    (["--dev", "--shutdown-grace-ms", "-1"], [:], "--shutdown-grace-ms: expected a whole number"),
    (
      ["--dev", "--log-level", "loud"], [:], "--log-level: expected debug, info, warn or error, got \"loud\""
    ),
    (["--dev=maybe"], [:], "--dev: expected true or false, got \"maybe\""),
    (["--dev"], ["ANONAUTH_TEST_HOOKS": "perhaps"], "--test-hooks: expected true or false"),
    (["--dev", "--nope"], [:], "unknown flag --nope"),
    (["--dev", "serve"], [:], "unexpected argument \"serve\""),
    (["--dev", "--listen"], [:], "--listen needs a value"),
    (["--dev", "--issuer-prefix", "anonauth.local"], [:], "--issuer-prefix: expected an http(s) URL"),
    (["--dev", "--data-dir", ""], [:], "--data-dir: must not be empty"),
    (
      ["--dev", "--config", "/nonexistent/anonauth.json"], [:],
      "config file /nonexistent/anonauth.json: cannot read it"
    ),
    (["--dev", "--tls-cert", "/c.pem"], [:], "--tls-cert and --tls-key go together"),
    (["--dev", "--tls-key", "/k.pem"], [:], "--tls-cert and --tls-key go together"),
    ([], [:], "--tls-cert and --tls-key are required without --dev"),
    (["--tls-cert", "/c.pem", "--tls-key", "/k.pem"], [:], "--master-key-file is required without --dev"),
    (["--master-key-file", "/m.key"], ["ANONAUTH_DEV": "false"], "--tls-cert and --tls-key are required"),
  ]

  @Test(arguments: cases)
  func refused(_ arguments: [String], _ environment: [String: String], _ says: String) {
    #expect(refusal(arguments, environment: environment).contains(says))
  }

  @Test(arguments: [
    ("[1, 2]", "not a JSON object"),
    ("{\"listen\": ", "not a JSON object"),
    ("{\"nope\": 1}", "unknown setting \"nope\""),
    ("{\"config\": \"other.json\"}", "unknown setting \"config\""),
    ("{\"io-threads\": [1]}", "\"io-threads\" must be a string, number or boolean"),
    ("{\"io-threads\": 0}", "--io-threads: expected a whole number"),
  ])
  func badConfigFile(_ contents: String, _ says: String) throws {
    let scratch = try Scratch()
    let file = try scratch.write("anonauth.json", contents)
    let message = refusal(["--dev", "--config", file])
    #expect(message.contains(says), "\(message)")
  }

  @Test func unreadableConfigFile() throws {
    let scratch = try Scratch()
    // A directory exists but cannot be read as a file.
    let message = refusal(["--dev", "--config", scratch.path])
    #expect(message.contains("cannot read it") || message.contains("not a JSON object"), "\(message)")
  }
}
