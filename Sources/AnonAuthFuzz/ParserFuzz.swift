import AnonAuthCrypto
import AnonAuthNet
@_spi(Fuzzing) import AnonAuthServer
@_spi(Fuzzing) import AnonAuthService
import Foundation

// Small targets: each hands the input to one parser and touches what it returns.

enum JWKSFuzz {
  static func run(_ data: [UInt8]) {
    if let set = try? JWKSet(json: data) {
      for algorithm in ["RS256", "ES256"] { _ = set.candidates(kid: nil, algorithm: algorithm) }
    }
    // The same bytes as Google's x509 certificate map (the Firebase session exchange).
    if let set = try? JWKSet(x509JSON: data) { _ = set.candidates(kid: "kid", algorithm: "RS256") }
  }
}

enum JSONFuzz {
  static func run(_ data: [UInt8]) {
    // The lenient reader (custom claims, hash configs: the strict parser, then Foundation
    // for what it refuses) goes into tokens that are read back strictly, so whatever it
    // accepts must encode to JSON the strict parser reads as the same value.
    if let lenient = JSONValue(lenientJSONBytes: data) {
      precondition(
        JSONValue(jsonBytes: lenient.jsonBytes) == lenient,
        "a leniently read value does not survive its encoding")
    }
    guard let value = JSONValue(jsonBytes: data) else { return }
    // What the parser accepts, the encoder writes back in a form the parser reads as the
    // same value (VerifyIdToken hands on signed claims on the strength of this).
    precondition(
      JSONValue(jsonBytes: value.jsonBytes) == value, "a parsed JSON value does not survive its encoding")
  }
}

enum OpsHTTPFuzz {
  static func run(_ data: [UInt8]) {
    _ = HTTPRequestHead(data[...])
  }
}

/// Feeds the response in pieces sized by the first byte, then ends the connection.
enum OutboundHTTPFuzz {
  static func run(_ data: [UInt8]) {
    guard let first = data.first else { return }
    let step = Int(first) + 1
    var parser = HTTPResponseParser(maxHeadBytes: 4096, maxBodyBytes: 64 * 1024)
    var index = 1
    do {
      while index < data.count, !parser.isComplete {
        let end = min(index + step, data.count)
        try parser.append(data[index..<end])
        index = end
      }
      _ = try parser.finish()
    } catch {}
  }
}

enum PHCFuzz {
  static func run(_ data: [UInt8]) {
    guard let phc = try? PHCString(parsing: String(decoding: data, as: UTF8.self)) else { return }
    _ = phc.text
  }
}

/// An import's hash config, as the CLI reads the file and the service opens the stored
/// copy. A parsed config must encode and decode back to itself.
enum HashConfigFuzz {
  static func run(_ data: [UInt8]) {
    if let config = try? ImportHashConfig(parsing: String(decoding: data, as: UTF8.self)) {
      let again = try? ImportHashConfig(decoding: config.encoded())
      precondition(again == config, "a parsed hash config does not survive its own encoding")
      _ = config.configID
    }
    _ = try? ImportHashConfig(decoding: data)
  }
}

/// The configuration file as `--config` reads it, through a real file.
enum ConfigFuzz {
  static let path = NSTemporaryDirectory() + "anonauth-fuzz-config-\(getpid()).json"

  static func run(_ data: [UInt8]) {
    guard FileManager.default.createFile(atPath: path, contents: Data(data)) else { return }
    _ = try? DaemonConfig.resolve(arguments: ["--config", path], environment: [:])
  }
}
