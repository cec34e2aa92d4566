import AnonAuthCrypto
import Foundation
import Testing

/// `ImportHashConfig.verify` for every algorithm, with hashes made independently, and
/// with hostile sizes.
@Suite struct ImportHashVerifyTests {
  static func bytes(_ base64: String) -> [UInt8] { Array(Data(base64Encoded: base64) ?? Data()) }
  static let salt = bytes("42xEC+ixf3L2lw==")

  /// One account per algorithm, each with its config text, password, salt and hash.
  struct Case: Sendable, CustomTestStringConvertible {
    let name: String
    let config: String
    let password: String
    let salt: [UInt8]
    let hash: [UInt8]
    var testDescription: String { name }
  }

  static let cases: [Case] = [
    // Firebase's published example (github.com/firebase/scrypt).
    Case(
      name: "SCRYPT", config: ImportHashConfigTests.consoleBlock, password: "user1password",
      salt: salt, hash: ImportHashConfigTests.publishedHash),
    // python3 -c 'import hashlib, base64; print(base64.b64encode(hashlib.pbkdf2_hmac(
    //   "sha256", "pässwörd 2".encode(), b"\x00\x01salt\xff", 1000, 64)).decode())'
    // (the hex is in PBKDF2AndBcryptTests; Firebase's own tests store 64 bytes).
    Case(
      name: "PBKDF2_SHA256 64 bytes", config: #"{"algorithm": "PBKDF2_SHA256", "rounds": 1000}"#,
      password: "pässwörd 2", salt: [0x00, 0x01] + Array("salt".utf8) + [0xff],
      hash: [UInt8](
        hex: "9f619e888ecbb58425c247d7eaf5032a2fa795031609122fbebd228e51728322"
          + "f62824bf90e461ca025b4ab9c13fe66e667c3b20f3be5b75f9603660f852758e")),
    // The same, dkLen 32: PBKDF2's output is a prefix of the longer one.
    Case(
      name: "PBKDF2_SHA256 32 bytes", config: #"{"algorithm": "PBKDF2_SHA256", "rounds": 1000}"#,
      password: "pässwörd 2", salt: [0x00, 0x01] + Array("salt".utf8) + [0xff],
      hash: [UInt8](hex: "9f619e888ecbb58425c247d7eaf5032a2fa795031609122fbebd228e51728322")),
    // python3 -c 'import hmac, base64; s = base64.b64decode("42xEC+ixf3L2lw==");
    //   print(base64.b64encode(hmac.new(b"secret", b"user1password" + s, "sha256").digest()).decode())'
    Case(
      name: "HMAC_SHA256 password first",
      config: "hash_config { algorithm: HMAC_SHA256, base64_signer_key: c2VjcmV0 }",
      password: "user1password", salt: salt, hash: bytes("WVXQLs6qknAglajIcxlPEtiuFI/b9Rm/aKwBXJY5MOo=")),
    // The same with s + b"user1password".
    Case(
      name: "HMAC_SHA256 salt first",
      config:
        #"{"algorithm": "HMAC_SHA256", "base64_hmac_key": "c2VjcmV0", "hash_input_order": "SALT_FIRST"}"#,
      password: "user1password", salt: salt, hash: bytes("z+yDpHz094+MjBZ/XbNRI6k2ey7UnSC5plZIRra4MZo=")),
    // python3 -c 'import hmac; print(hmac.new(b"secret", "pässwörd 2".encode()
    //   + b"\x00\x01salt\xff", "sha256").hexdigest())'
    Case(
      name: "HMAC_SHA256 binary salt", config: #"{"algorithm": "HMAC_SHA256", "signerKey": "c2VjcmV0"}"#,
      password: "pässwörd 2", salt: [0x00, 0x01] + Array("salt".utf8) + [0xff],
      hash: [UInt8](hex: "42178758b855311201cfcf1b36a920c3f534e2478832a33b0affe732b8b4a406")),
    // pip bcrypt, as in PBKDF2AndBcryptTests; the salt is not used.
    Case(
      name: "BCRYPT", config: #"{"algorithm": "BCRYPT"}"#, password: "pässwörd 2", salt: [],
      hash: Array("$2b$05$R2Z0ieQWGaKz/uLSpSib3ehccOjpvAoWB4HAKijK5cGEZJ8ptmNiO".utf8)),
  ]

  @Test(arguments: cases)
  func theRightPasswordVerifies(account: Case) throws {
    let config = try ImportHashConfig(parsing: account.config)
    #expect(config.verify(password: account.password, salt: account.salt, hash: account.hash))
  }

  @Test(arguments: cases)
  func aWrongPasswordFails(account: Case) throws {
    let config = try ImportHashConfig(parsing: account.config)
    for wrong in [
      account.password + "x", String(account.password.dropLast()), account.password.uppercased(), " ",
    ] {
      #expect(!config.verify(password: wrong, salt: account.salt, hash: account.hash))
    }
  }

  @Test(arguments: cases)
  func aChangedHashOrSaltFails(account: Case) throws {
    let config = try ImportHashConfig(parsing: account.config)
    #expect(
      !config.verify(password: account.password, salt: account.salt, hash: flippingBit(9, of: account.hash)))
    #expect(!config.verify(password: account.password, salt: account.salt, hash: account.hash + [0]))
    if config.algorithm != .pbkdf2SHA256 {
      // PBKDF2's shorter outputs are prefixes of its longer ones, so a shortened PBKDF2
      // hash is still a hash of the password (of at least 16 bytes).
      #expect(
        !config.verify(password: account.password, salt: account.salt, hash: Array(account.hash.dropLast())))
    }
    if config.algorithm != .bcrypt {
      #expect(!config.verify(password: account.password, salt: account.salt + [0], hash: account.hash))
    }
  }

  @Test(arguments: cases)
  func hostileSizesNeverMatchAndNeverTrap(account: Case) throws {
    let config = try ImportHashConfig(parsing: account.config)
    let salt = config.algorithm == .bcrypt ? [1] : account.salt
    #expect(!config.verify(password: account.password, salt: salt, hash: []))
    #expect(!config.verify(password: "", salt: salt, hash: account.hash))
    #expect(!config.verify(password: account.password, salt: salt, hash: Array(account.hash.prefix(15))))
    #expect(
      !config.verify(password: account.password, salt: salt, hash: [UInt8](repeating: 0, count: 1 << 20)))
    #expect(!config.verify(password: String(repeating: "p", count: 1 << 20), salt: salt, hash: account.hash))
    if config.algorithm != .bcrypt {
      #expect(!config.verify(password: account.password, salt: [], hash: account.hash))
      #expect(
        !config.verify(
          password: account.password, salt: [UInt8](repeating: 7, count: 1 << 20), hash: account.hash))
    }
  }

  @Test func theOrderMatters() throws {
    // A password-first hash must not verify under a salt-first config, and back.
    let first = try ImportHashConfig(algorithm: .hmacSHA256, signerKey: Array("secret".utf8))
    let saltFirst = try ImportHashConfig(
      algorithm: .hmacSHA256, signerKey: Array("secret".utf8), saltFirst: true)
    let passwordFirstHash = Self.bytes("WVXQLs6qknAglajIcxlPEtiuFI/b9Rm/aKwBXJY5MOo=")
    let saltFirstHash = Self.bytes("z+yDpHz094+MjBZ/XbNRI6k2ey7UnSC5plZIRra4MZo=")
    #expect(first.verify(password: "user1password", salt: Self.salt, hash: passwordFirstHash))
    #expect(!saltFirst.verify(password: "user1password", salt: Self.salt, hash: passwordFirstHash))
    #expect(saltFirst.verify(password: "user1password", salt: Self.salt, hash: saltFirstHash))
    #expect(!first.verify(password: "user1password", salt: Self.salt, hash: saltFirstHash))
  }

  @Test func aBcryptConfigRefusesHashesOfOtherSchemes() throws {
    let config = try ImportHashConfig(algorithm: .bcrypt)
    // A real sha512crypt hash of "user1password", which crypt(3) itself would accept:
    // python3 -c 'import crypt; print(crypt.crypt("user1password", "$6$saltsalt$"))'
    let sha512crypt = Array(
      "$6$saltsalt$4nx4B5s2W5gmGj86jC9tvXnUNrrLe1Y2Jonz3I4wuRcyV8CPL5fv0.Uno5eajnnzQn8Bo2XHfQQHJKDyWnGFL0"
        .utf8)
    #expect(!config.verify(password: "user1password", salt: [], hash: sha512crypt))
  }
}
