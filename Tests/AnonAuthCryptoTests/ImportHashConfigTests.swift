import AnonAuthCrypto
import Foundation
import Testing

/// Parsing, validating and sealing the hash configs of `firebase auth:import`, and
/// verifying imported hashes with them: Firebase's published example, and vectors made
/// independently with Python's hashlib/hmac and the pip `bcrypt` package.
@Suite struct ImportHashConfigTests {
  static func bytes(_ base64: String) -> [UInt8] { Array(Data(base64Encoded: base64) ?? Data()) }

  /// The block exactly as the Firebase console shows it, with Firebase's published example.
  static let consoleBlock = """
    hash_config {
      algorithm: SCRYPT,
      base64_signer_key: jxspr8Ki0RYycVU8zykbdLGjFQ3McFUH0uiiTvC8pVMXAn210wjLNmdZJzxUECKbm0QsEmYUSDzZvpjeJ9WmXA==,
      base64_salt_separator: Bw==,
      rounds: 8,
      mem_cost: 14,
    }
    """
  static let signerKey = bytes(
    "jxspr8Ki0RYycVU8zykbdLGjFQ3McFUH0uiiTvC8pVMXAn210wjLNmdZJzxUECKbm0QsEmYUSDzZvpjeJ9WmXA==")
  static let publishedSalt = bytes("42xEC+ixf3L2lw==")
  static let publishedHash = bytes(
    "lSrfV15cpx95/sZS2W9c9Kp6i/LVgQNDNC/qzrCnh1SAyZvqmZqAjTdn3aoItz+VHjoZilo78198JAdRuid5lQ==")

  // MARK: - Parsing

  @Test func theConsoleBlockParsesAndVerifiesFirebasesPublishedExample() throws {
    let config = try ImportHashConfig(parsing: Self.consoleBlock)
    #expect(config.algorithm == .scrypt)
    #expect(config.signerKey == Self.signerKey)
    #expect(config.saltSeparator == [0x07])
    #expect(config.rounds == 8 && config.memCost == 14 && !config.saltFirst)
    #expect(config.verify(password: "user1password", salt: Self.publishedSalt, hash: Self.publishedHash))
    #expect(!config.verify(password: "user1passwore", salt: Self.publishedSalt, hash: Self.publishedHash))
  }

  @Test(arguments: [
    // One line, no trailing comma, quoted values, tabs and CRLF, no hash_config prefix.
    "hash_config { algorithm: SCRYPT, base64_signer_key: \(key), base64_salt_separator: Bw==, rounds: 8, mem_cost: 14 }",
    "hash_config {\r\n\talgorithm: \"SCRYPT\",\r\n\tbase64_signer_key: \"\(key)\",\r\n\tbase64_salt_separator: 'Bw==',\r\n"
      + "\trounds: \"8\",\r\n\tmem_cost: 14\r\n}\r\n",
    "  {\n algorithm : scrypt\n base64_signer_key:\(key)\n base64_salt_separator:Bw==\n rounds:8\n mem_cost:14\n}\n\n",
    "hash_config: {algorithm: SCRYPT,,, base64_signer_key: \(key), base64_salt_separator: Bw, rounds: 8, mem_cost: 14,}",
    // JSON: snake_case, camelCase, wrapped, URL-safe base64 without padding.
    #"{"algorithm": "SCRYPT", "base64_signer_key": "\#(key)", "base64_salt_separator": "Bw==", "rounds": 8, "mem_cost": 14}"#,
    #"{"algorithm": "SCRYPT", "signerKey": "\#(key)", "saltSeparator": "Bw==", "rounds": "8", "memCost": 14}"#,
    #"{"hash_config": {"algorithm": "SCRYPT", "hashKey": "\#(key)", "saltSeparator": "Bw==", "rounds": 8, "memoryCost": 14.0}}"#,
    #"{"algorithm": "SCRYPT", "signerKey": "\#(urlSafeKey)", "saltSeparator": "Bw", "rounds": 8, "mem_cost": 14, "hash_input_order": null}"#,
    // JSON with a trailing comma, which Foundation's parser accepted before the strict one.
    #"{"algorithm": "SCRYPT", "signerKey": "\#(key)", "saltSeparator": "Bw==", "rounds": 8, "mem_cost": 14,}"#,
  ])
  func variationsOfTheSameConfigParseAlike(text: String) throws {
    #expect(try ImportHashConfig(parsing: text) == ImportHashConfig(parsing: Self.consoleBlock))
  }
  static let key = "jxspr8Ki0RYycVU8zykbdLGjFQ3McFUH0uiiTvC8pVMXAn210wjLNmdZJzxUECKbm0QsEmYUSDzZvpjeJ9WmXA=="
  static let urlSafeKey =
    "jxspr8Ki0RYycVU8zykbdLGjFQ3McFUH0uiiTvC8pVMXAn210wjLNmdZJzxUECKbm0QsEmYUSDzZvpjeJ9WmXA"

  @Test func otherAlgorithmsParse() throws {
    let pbkdf2 = try ImportHashConfig(parsing: #"{"algorithm": "PBKDF2_SHA256", "rounds": 100000}"#)
    #expect(pbkdf2 == (try ImportHashConfig(algorithm: .pbkdf2SHA256, rounds: 100_000)))
    let hmac = try ImportHashConfig(
      parsing:
        #"{"algorithm": "hmac_sha256", "base64_hmac_key": "c2VjcmV0", "hash_input_order": "salt_first"}"#)
    #expect(
      hmac == (try ImportHashConfig(algorithm: .hmacSHA256, signerKey: Array("secret".utf8), saltFirst: true))
    )
    let hmacDefault = try ImportHashConfig(
      parsing: "hash_config { algorithm: HMAC_SHA256, hash_key: c2VjcmV0 }")
    #expect(!hmacDefault.saltFirst)
    let passwordFirst = try ImportHashConfig(
      parsing:
        #"{"algorithm": "HMAC_SHA256", "hmacKey": "c2VjcmV0", "passwordHashOrder": "PASSWORD_AND_SALT"}"#)
    #expect(passwordFirst == hmacDefault)
    #expect(try ImportHashConfig(parsing: #"{"algorithm": "BCRYPT"}"#).algorithm == .bcrypt)
  }

  @Test func settingsTheAlgorithmDoesNotUseAreDropped() throws {
    // As firebase-tools drops them: equal hashing, equal config, equal id.
    let noisy = try ImportHashConfig(
      parsing: #"{"algorithm": "PBKDF2_SHA256", "rounds": 1000, "mem_cost": 14, "signerKey": "c2VjcmV0", "#
        + #""saltSeparator": "Bw==", "hash_input_order": "SALT_FIRST"}"#)
    let plain = try ImportHashConfig(algorithm: .pbkdf2SHA256, rounds: 1000)
    #expect(noisy == plain)
    #expect(noisy.configID == plain.configID)
    let bcrypt = try ImportHashConfig(algorithm: .bcrypt, signerKey: [1], rounds: 10)
    #expect(bcrypt.signerKey.isEmpty && bcrypt.rounds == 0)
  }

  static let errorCases: [(String, ImportHashConfigError.Kind)] = [
    ("", .syntax),
    ("algorithm: SCRYPT", .syntax),
    ("hash_config { algorithm: SCRYPT", .syntax),
    ("hash_config { algorithm: SCRYPT, inner { rounds: 8 } }", .syntax),
    ("hash_config { algorithm SCRYPT }", .syntax),
    ("hash_config { : SCRYPT }", .syntax),
    ("[1, 2]", .syntax),
    (#""SCRYPT""#, .syntax),
    ("hash_config { algorithm: SCRYPT, colour: blue }", .unknownKey),
    (#"{"algorithm": "BCRYPT", "cost": 10}"#, .unknownKey),
    ("hash_config { algorithm: SCRYPT, algorithm: SCRYPT }", .duplicateKey),
    (
      "hash_config { algorithm: HMAC_SHA256, base64_signer_key: c2VjcmV0, hash_key: c2VjcmV0 }", .duplicateKey
    ),
    (#"{"algorithm": "HMAC_SHA256", "signerKey": "c2VjcmV0", "base64_hmac_key": "c2VjcmV0"}"#, .duplicateKey),
    ("hash_config { algorithm: MD5, rounds: 1 }", .unknownAlgorithm),
    ("hash_config { algorithm: STANDARD_SCRYPT }", .unknownAlgorithm),
    (#"{"rounds": 8}"#, .missing),
    ("hash_config { rounds: 8 }", .missing),
    ("hash_config { algorithm: SCRYPT, rounds: 8, mem_cost: 14 }", .missing),
    ("hash_config { algorithm: SCRYPT, base64_signer_key: \(key), mem_cost: 14 }", .missing),
    ("hash_config { algorithm: SCRYPT, base64_signer_key: \(key), rounds: 8 }", .missing),
    ("hash_config { algorithm: SCRYPT, base64_signer_key: , rounds: 8, mem_cost: 14 }", .missing),
    (#"{"algorithm": "SCRYPT", "signerKey": null, "rounds": 8, "memCost": 14}"#, .missing),
    ("hash_config { algorithm: PBKDF2_SHA256 }", .missing),
    ("hash_config { algorithm: HMAC_SHA256 }", .missing),
    ("hash_config { algorithm: SCRYPT, base64_signer_key: \(key), rounds: 9, mem_cost: 14 }", .outOfRange),
    ("hash_config { algorithm: SCRYPT, base64_signer_key: \(key), rounds: 0, mem_cost: 14 }", .outOfRange),
    ("hash_config { algorithm: SCRYPT, base64_signer_key: \(key), rounds: 8, mem_cost: 15 }", .outOfRange),
    ("hash_config { algorithm: SCRYPT, base64_signer_key: \(key), rounds: 8, mem_cost: -1 }", .outOfRange),
    ("hash_config { algorithm: PBKDF2_SHA256, rounds: 0 }", .outOfRange),
    ("hash_config { algorithm: PBKDF2_SHA256, rounds: 1000001 }", .outOfRange),
    (
      "hash_config { algorithm: SCRYPT, base64_signer_key: not*base64, rounds: 8, mem_cost: 14 }",
      .invalidValue
    ),
    (
      "hash_config { algorithm: SCRYPT, base64_signer_key: \(key), rounds: eight, mem_cost: 14 }",
      .invalidValue
    ),
    (
      "hash_config { algorithm: SCRYPT, base64_signer_key: \(key), rounds: 8.5, mem_cost: 14 }", .invalidValue
    ),
    ("hash_config { algorithm: PBKDF2_SHA256, rounds: 99999999999999999999 }", .invalidValue),
    (#"{"algorithm": "PBKDF2_SHA256", "rounds": 8.5}"#, .invalidValue),
    (#"{"algorithm": 7}"#, .invalidValue),
    (#"{"algorithm": "HMAC_SHA256", "signerKey": 12}"#, .invalidValue),
    (#"{"algorithm": "HMAC_SHA256", "signerKey": "c2VjcmV0", "hash_input_order": "RANDOM"}"#, .invalidValue),
    (#"{"algorithm": "HMAC_SHA256", "signerKey": "c2VjcmV0==="}"#, .invalidValue),
    (String(repeating: " ", count: ImportHashConfig.maxTextBytes + 1), .tooLarge),
  ]

  @Test(arguments: errorCases)
  func mistakesAreRefusedWithTheirKind(text: String, kind: ImportHashConfigError.Kind) {
    #expect {
      try ImportHashConfig(parsing: text)
    } throws: { error in
      (error as? ImportHashConfigError)?.kind == kind
    }
  }

  @Test func messagesNameWhatIsWrongButNotTheKey() throws {
    func message(_ text: String) -> String {
      do {
        _ = try ImportHashConfig(parsing: text)
        return ""
      } catch {
        return error.description
      }
    }
    #expect(message("hash_config { algorithm: MD5 }").contains("'MD5' is not supported"))
    #expect(message("hash_config { algorithm: SCRYPT, colour: blue }").contains("unknown key 'colour'"))
    let range = message(
      "hash_config { algorithm: SCRYPT, base64_signer_key: \(Self.key), rounds: 9, mem_cost: 14 }")
    #expect(range.contains("rounds must be 1...8 for SCRYPT"))
    #expect(!range.contains("jxspr8Ki"))
    #expect(message("hash_config { algorithm: HMAC_SHA256 }").contains("HMAC_SHA256 needs base64_signer_key"))
  }

  @Test func keysOverAKilobyteAreRefused() {
    #expect(throws: ImportHashConfigError.self) {
      try ImportHashConfig(algorithm: .hmacSHA256, signerKey: [UInt8](repeating: 1, count: 1025))
    }
    #expect(throws: ImportHashConfigError.self) {
      try ImportHashConfig(
        algorithm: .scrypt, signerKey: [1], saltSeparator: [UInt8](repeating: 1, count: 1025), rounds: 8,
        memCost: 14)
    }
  }

  // MARK: - Sealed encoding

  @Test(arguments: [
    consoleBlock,
    #"{"algorithm": "PBKDF2_SHA256", "rounds": 100000}"#,
    #"{"algorithm": "HMAC_SHA256", "signerKey": "c2VjcmV0", "hash_input_order": "SALT_FIRST"}"#,
    #"{"algorithm": "HMAC_SHA256", "signerKey": "c2VjcmV0"}"#,
    #"{"algorithm": "BCRYPT"}"#,
  ])
  func encodingRoundTripsWithAStableID(text: String) throws {
    let config = try ImportHashConfig(parsing: text)
    let decoded = try ImportHashConfig(decoding: config.encoded())
    #expect(decoded == config)
    #expect(decoded.encoded() == config.encoded())
    #expect(decoded.configID == config.configID)
    #expect(try ImportHashConfig(parsing: text).configID == config.configID)
    #expect(config.configID.count == 32)
    #expect(config.configID.allSatisfy { "0123456789abcdef".contains($0) })
  }

  @Test func theEncodingIsPinned() throws {
    // If this changes, sealed configs and their ids change: bump encodingVersion instead.
    let config = try ImportHashConfig(parsing: Self.consoleBlock)
    let text = String(decoding: config.encoded(), as: UTF8.self)
    #expect(
      text
        == #"{"algorithm":"SCRYPT","mem_cost":14,"rounds":8,"salt_first":false,"salt_separator":"Bw==","#
        + #""signer_key":"\#(Self.key)","version":1}"#)
    // python3 -c 'import hashlib; print(hashlib.sha256(b"<the text above>").hexdigest()[:32])'.
    #expect(config.configID == "2783ef1e58dd6d2bd4d62f8a00614a12")
    let hmac = try ImportHashConfig(algorithm: .hmacSHA256, signerKey: Array("secret".utf8), saltFirst: true)
    #expect(
      hmac.configID
        != (try ImportHashConfig(algorithm: .hmacSHA256, signerKey: Array("secret".utf8))).configID)
  }

  @Test(arguments: [
    "",
    "[]",
    #"{"algorithm":"BCRYPT","mem_cost":0,"rounds":0,"salt_first":false,"salt_separator":"","signer_key":"","version":2}"#,
    #"{"algorithm":"BCRYPT","mem_cost":0,"rounds":0,"salt_first":false,"salt_separator":"","signer_key":""}"#,
    #"{"algorithm":"BCRYPT","mem_cost":0,"rounds":0,"salt_first":false,"salt_separator":"","version":1}"#,
    #"{"algorithm":"BCRYPT","mem_cost":0,"rounds":0,"salt_first":false,"salt_separator":"","signer_key":"","version":1,"x":1}"#,
    #"{"algorithm":"MD5","mem_cost":0,"rounds":0,"salt_first":false,"salt_separator":"","signer_key":"","version":1}"#,
    #"{"algorithm":"BCRYPT","mem_cost":0,"rounds":"0","salt_first":false,"salt_separator":"","signer_key":"","version":1}"#,
    #"{"algorithm":"BCRYPT","mem_cost":0,"rounds":0,"salt_first":0,"salt_separator":"","signer_key":"","version":1}"#,
    #"{"algorithm":"HMAC_SHA256","mem_cost":0,"rounds":0,"salt_first":false,"salt_separator":"","signer_key":"*","version":1}"#,
  ])
  func malformedEncodingsAreRefused(text: String) {
    #expect(throws: ImportHashConfigError.self) { try ImportHashConfig(decoding: Array(text.utf8)) }
  }

  @Test func anEncodingWithValuesOutOfRangeIsRefused() {
    let text =
      #"{"algorithm":"SCRYPT","mem_cost":30,"rounds":8,"salt_first":false,"salt_separator":"","signer_key":"c2VjcmV0","version":1}"#
    #expect {
      try ImportHashConfig(decoding: Array(text.utf8))
    } throws: { error in
      (error as? ImportHashConfigError)?.kind == .outOfRange
    }
  }
}
