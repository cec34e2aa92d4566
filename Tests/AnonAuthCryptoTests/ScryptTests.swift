import AnonAuthCrypto
import Foundation
import Testing

@Suite struct ScryptTests {
  // RFC 7914 section 12, the first two vectors (the others take seconds).
  @Test func rfc7914EmptyPasswordAndSalt() throws {
    let key = try Scrypt.derive(password: [], salt: [], n: 16, r: 1, p: 1, length: 64)
    #expect(
      key.hex
        == "77d6576238657b203b19ca42c18a0497f16b4844e3074ae8dfdffa3fede21442"
        + "fcd0069ded0948f8326a753a0fc81f17e8d3e0fb2e0d3628cf35e20c38d18906")
  }

  @Test func rfc7914PasswordNaCl() throws {
    let key = try Scrypt.derive(
      password: Array("password".utf8), salt: Array("NaCl".utf8), n: 1024, r: 8, p: 16, length: 64)
    #expect(
      key.hex
        == "fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b373162"
        + "2eaf30d92e22a3886ff109279d9830dac727afb94a83ee6d8360cbdfa2cc0640")
  }

  @Test(arguments: [
    (UInt64(15), UInt64(1), UInt64(1), 32),  // N not a power of two
    (1, 1, 1, 32),  // N must exceed 1
    (16, 0, 1, 32),  // r at least 1
    (16, 1, 0, 32),  // p at least 1
    (16, 1, 1, 0),  // no output
  ])
  func refusesImpossibleParameters(n: UInt64, r: UInt64, p: UInt64, length: Int) {
    #expect(throws: CryptoError.self) {
      _ = try Scrypt.derive(password: [1], salt: [2], n: n, r: r, p: p, length: length)
    }
  }

  @Test func parameterBounds() throws {
    #expect(throws: CryptoError.self) { _ = try ScryptParameters(ln: 0, r: 8, p: 1) }
    #expect(throws: CryptoError.self) { _ = try ScryptParameters(ln: 21, r: 8, p: 1) }
    #expect(throws: CryptoError.self) { _ = try ScryptParameters(ln: 14, r: 33, p: 1) }
    #expect(throws: CryptoError.self) { _ = try ScryptParameters(ln: 14, r: 8, p: 17) }
    // 128 * 32 * 2^16 = 256 MiB: over the memory bound although each value is in range.
    #expect(throws: CryptoError.self) { _ = try ScryptParameters(ln: 16, r: 32, p: 1) }
    // N * r * p = 2^14 * 8 * 16 = 2^21 is fine; 2^17 * 8 * 16 = 2^24 is the edge.
    _ = try ScryptParameters(ln: 14, r: 8, p: 16)
    #expect(throws: CryptoError.self) { _ = try ScryptParameters(ln: 17, r: 8, p: 16) }
    #expect(ScryptParameters.current.ln >= 14)
    #expect(ScryptParameters.current.r == 8 && ScryptParameters.current.p == 1)
  }
}

@Suite struct PHCStringTests {
  /// Made with Python's hashlib.scrypt (an independent implementation) and base64
  /// without padding, as the PHC string format says.
  static let pythonLn10 =
    "$scrypt$ln=10,r=8,p=1$MDEyMzQ1Njc4OWFiY2RlZg$6g3umF+uVrJsObaTZhIbbTlgrvOEFcCItdwSjtPF67M"
  static let pythonLn15 =
    "$scrypt$ln=15,r=8,p=1$MDEyMzQ1Njc4OWFiY2RlZg$puHF8wsl4P5tR3JANsCleZiOQes+05KY2PoHbUEpMGQ"

  @Test func verifiesAHashMadeElsewhere() throws {
    let hasher = PasswordHasher()
    let result = hasher.verify("correct horse", against: Self.pythonLn15)
    #expect(result == .init(matches: true, needsRehash: false))
    #expect(!hasher.verify("correct horsf", against: Self.pythonLn15).matches)
    let phc = try PHCString(parsing: Self.pythonLn15)
    #expect(phc.text == Self.pythonLn15)
    #expect(phc.salt == Array("0123456789abcdef".utf8))
  }

  @Test func roundTrip() throws {
    let hasher = PasswordHasher(parameters: try ScryptParameters(ln: 10, r: 8, p: 1))
    let stored = try hasher.hash("pässwörd 🔑")
    #expect(stored.hasPrefix("$scrypt$ln=10,r=8,p=1$"))
    let phc = try PHCString(parsing: stored)
    #expect(phc.salt.count == 16 && phc.hash.count == 32)
    // Base64 without padding, as PHC says.
    #expect(stored.split(separator: "$").suffix(2).allSatisfy { !$0.contains("=") })
    #expect(hasher.verify("pässwörd 🔑", against: stored) == .init(matches: true, needsRehash: false))
    #expect(hasher.verify("passwörd 🔑", against: stored) == .init(matches: false, needsRehash: false))
    #expect(hasher.verify("", against: stored).matches == false)
    // Two hashes of one password differ by their salt.
    #expect(try hasher.hash("x") != (try hasher.hash("x")))
  }

  @Test func weakerParametersStillVerifyAndAskForARehash() throws {
    let current = PasswordHasher()
    let result = current.verify("correct horse", against: Self.pythonLn10)
    #expect(result == .init(matches: true, needsRehash: true))
    // A wrong password never asks for a rehash: nothing may be stored for it.
    #expect(current.verify("wrong", against: Self.pythonLn10) == .init(matches: false, needsRehash: false))
    // Stronger parameters than current do not ask either.
    let stronger = try PasswordHasher(parameters: ScryptParameters(ln: 11, r: 8, p: 1)).hash("a")
    let weakHasher = PasswordHasher(parameters: try ScryptParameters(ln: 10, r: 8, p: 1))
    #expect(weakHasher.verify("a", against: stronger) == .init(matches: true, needsRehash: false))
  }

  @Test(arguments: [
    "",
    "plain text password",
    "$argon2id$v=19$m=65536,t=3,p=4$MDEyMzQ1Njc4OWFiY2RlZg$6g3umF+uVrJsObaTZhIbbTlgrvOEFcCItdwSjtPF67M",
    "scrypt$ln=10,r=8,p=1$MDEyMzQ1Njc4OWFiY2RlZg$6g3umF+uVrJsObaTZhIbbTlgrvOEFcCItdwSjtPF67M",
    "$scrypt$ln=10,r=8$MDEyMzQ1Njc4OWFiY2RlZg$6g3umF+uVrJsObaTZhIbbTlgrvOEFcCItdwSjtPF67M",
    "$scrypt$ln=10,r=8,p=1,p=1$MDEyMzQ1Njc4OWFiY2RlZg$6g3umF+uVrJsObaTZhIbbTlgrvOEFcCItdwSjtPF67M",
    "$scrypt$ln=10,r=8,p=1,x=2$MDEyMzQ1Njc4OWFiY2RlZg$6g3umF+uVrJsObaTZhIbbTlgrvOEFcCItdwSjtPF67M",
    "$scrypt$ln=010,r=8,p=1$MDEyMzQ1Njc4OWFiY2RlZg$6g3umF+uVrJsObaTZhIbbTlgrvOEFcCItdwSjtPF67M",
    "$scrypt$ln=-1,r=8,p=1$MDEyMzQ1Njc4OWFiY2RlZg$6g3umF+uVrJsObaTZhIbbTlgrvOEFcCItdwSjtPF67M",
    "$scrypt$ln=40,r=8,p=1$MDEyMzQ1Njc4OWFiY2RlZg$6g3umF+uVrJsObaTZhIbbTlgrvOEFcCItdwSjtPF67M",
    "$scrypt$ln=14,r=0,p=1$MDEyMzQ1Njc4OWFiY2RlZg$6g3umF+uVrJsObaTZhIbbTlgrvOEFcCItdwSjtPF67M",
    "$scrypt$ln=14,r=8,p=9999$MDEyMzQ1Njc4OWFiY2RlZg$6g3umF+uVrJsObaTZhIbbTlgrvOEFcCItdwSjtPF67M",
    "$scrypt$ln=20,r=32,p=16$MDEyMzQ1Njc4OWFiY2RlZg$6g3umF+uVrJsObaTZhIbbTlgrvOEFcCItdwSjtPF67M",
    // Padding, base64url characters, a short salt, a short hash, a missing part.
    "$scrypt$ln=10,r=8,p=1$MDEyMzQ1Njc4OWFiY2RlZg==$6g3umF+uVrJsObaTZhIbbTlgrvOEFcCItdwSjtPF67M",
    "$scrypt$ln=10,r=8,p=1$MDEyMzQ1Njc4OWFiY2RlZg$6g3umF-uVrJsObaTZhIbbTlgrvOEFcCItdwSjtPF67M",
    "$scrypt$ln=10,r=8,p=1$MDEy$6g3umF+uVrJsObaTZhIbbTlgrvOEFcCItdwSjtPF67M",
    "$scrypt$ln=10,r=8,p=1$MDEyMzQ1Njc4OWFiY2RlZg$6g3umF+u",
    "$scrypt$ln=10,r=8,p=1$MDEyMzQ1Njc4OWFiY2RlZg",
    "$scrypt$ln=10,r=8,p=1$MDEyMzQ1Njc4OWFiY2RlZg$6g3umF+uVrJsObaTZhIbbTlgrvOEFcCItdwSjtPF67M$",
    // Non-zero unused bits in the last character ("N" instead of "M").
    "$scrypt$ln=10,r=8,p=1$MDEyMzQ1Njc4OWFiY2RlZg$6g3umF+uVrJsObaTZhIbbTlgrvOEFcCItdwSjtPF67N",
  ])
  func malformedStringsAreRefusedAndNeverMatch(text: String) {
    #expect(throws: CryptoError.self) { _ = try PHCString(parsing: text) }
    #expect(PasswordHasher().verify("correct horse", against: text).matches == false)
  }

  @Test func parametersInAnyOrder() throws {
    let reordered = Self.pythonLn10.replacingOccurrences(of: "ln=10,r=8,p=1", with: "p=1,ln=10,r=8")
    let phc = try PHCString(parsing: reordered)
    #expect(phc.parameters == (try ScryptParameters(ln: 10, r: 8, p: 1)))
    #expect(PasswordHasher().verify("correct horse", against: reordered).matches)
    #expect(phc.text == Self.pythonLn10)
  }

  @Test func tooLongTextIsRefusedBeforeParsing() {
    let long = Self.pythonLn10 + String(repeating: "A", count: 300)
    #expect(throws: CryptoError.self) { _ = try PHCString(parsing: long) }
  }
}
