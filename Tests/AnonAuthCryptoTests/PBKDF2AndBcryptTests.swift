import AnonAuthCrypto
import Testing

/// PBKDF2-HMAC-SHA256 and bcrypt against vectors made outside this code: RFC 7914's
/// PBKDF2 vector, Python's hashlib, and the pip `bcrypt` package (a separate bcrypt, not
/// the libxcrypt this code calls).
@Suite struct PBKDF2AndBcryptTests {
  @Test func pbkdf2MatchesRFC7914() throws {
    // RFC 7914 section 11: PBKDF2-HMAC-SHA256 (P="passwd", S="salt", c=1, dkLen=64).
    let expected = [UInt8](
      hex: "55ac046e56e3089fec1691c22544b605f94185216dde0465e68b9d57c20dacbc"
        + "49ca9cccf179b645991664b39d77ef317c71b845b1e30bd509112041d3a19783")
    #expect(
      try PBKDF2SHA256.derive(
        password: Array("passwd".utf8), salt: Array("salt".utf8), iterations: 1, length: 64)
        == expected)
  }

  @Test func pbkdf2MatchesHashlib() throws {
    // python3 -c 'import hashlib; print(hashlib.pbkdf2_hmac("sha256", "pässwörd 2".encode(),
    //   b"\x00\x01salt\xff", 1000, 64).hex())'
    let expected = [UInt8](
      hex: "9f619e888ecbb58425c247d7eaf5032a2fa795031609122fbebd228e51728322"
        + "f62824bf90e461ca025b4ab9c13fe66e667c3b20f3be5b75f9603660f852758e")
    let salt: [UInt8] = [0x00, 0x01] + Array("salt".utf8) + [0xff]
    #expect(
      try PBKDF2SHA256.derive(password: Array("pässwörd 2".utf8), salt: salt, iterations: 1000, length: 64)
        == expected)
  }

  @Test(arguments: [(0, 32), (-1, 32), (10_000_001, 32), (1, 0), (1, 1025)])
  func pbkdf2RefusesParametersOutOfRange(iterations: Int, length: Int) {
    #expect(throws: CryptoError.self) {
      try PBKDF2SHA256.derive(password: [1], salt: [1], iterations: iterations, length: length)
    }
  }

  /// Made with the pip `bcrypt` package 5.0.0 in a throwaway venv:
  /// `bcrypt.hashpw("pässwörd 2".encode(), bcrypt.gensalt(rounds=5, prefix=b"2b"))`,
  /// `bcrypt.hashpw(b"user1password", bcrypt.gensalt(rounds=4, prefix=b"2a"))`, and a
  /// `$2b$` hash of "correct horse" with its prefix changed to `$2y$`, which
  /// `bcrypt.checkpw(b"correct horse", ...)` accepts.
  static let vectors: [(password: String, hash: String)] = [
    ("pässwörd 2", "$2b$05$R2Z0ieQWGaKz/uLSpSib3ehccOjpvAoWB4HAKijK5cGEZJ8ptmNiO"),
    ("user1password", "$2a$04$PVGxEE76BOTjbaJy9f7kReaq.rOKuJlA68DDcKQvjFdgSqpyo8XWG"),
    ("correct horse", "$2y$04$RYZHYrVSdSKpGp0XUyQnk.90eR82ETEBed7aumyOdodV930q2f1.e"),
  ]

  @Test(arguments: vectors)
  func bcryptVerifiesHashesFromPipBcrypt(password: String, hash: String) {
    #expect(Bcrypt.verify(password: Array(password.utf8), hash: Array(hash.utf8)))
    #expect(!Bcrypt.verify(password: Array((password + "x").utf8), hash: Array(hash.utf8)))
    #expect(!Bcrypt.verify(password: Array(password.dropLast().utf8), hash: Array(hash.utf8)))
  }

  @Test func bcryptRefusesANulInThePassword() {
    // C strings end at NUL: "correct horse\0anything" must not pass as "correct horse".
    let (password, hash) = Self.vectors[2]
    #expect(!Bcrypt.verify(password: Array(password.utf8) + [0, 0x41], hash: Array(hash.utf8)))
  }

  @Test(arguments: [
    "",  // empty
    "$2b$04$RYZHYrVSdSKpGp0XUyQnk.90eR82ETEBed7aumyOdodV930q2f1.",  // 59 bytes
    "$2b$04$RYZHYrVSdSKpGp0XUyQnk.90eR82ETEBed7aumyOdodV930q2f1.ee",  // 61 bytes
    "$2x$04$RYZHYrVSdSKpGp0XUyQnk.90eR82ETEBed7aumyOdodV930q2f1.e",  // $2x$: the buggy variant
    "$2b$03$RYZHYrVSdSKpGp0XUyQnk.90eR82ETEBed7aumyOdodV930q2f1.e",  // cost below 4
    "$2b$31$RYZHYrVSdSKpGp0XUyQnk.90eR82ETEBed7aumyOdodV930q2f1.e",  // cost 2^31: hours
    "$2b$1a$RYZHYrVSdSKpGp0XUyQnk.90eR82ETEBed7aumyOdodV930q2f1.e",  // cost not digits
    "$2b$04$RYZHYrVSdSKpGp0XUyQnk.90eR82ETEBed7aumyOdodV930q2f1*e",  // not bcrypt base64
    "$6$rounds=5000$abcdefghijklmnop$ABCDEFGHIJKLMNOPQRSTUVWXYZabcdef",  // sha512crypt
  ])
  func bcryptRefusesHashesItDoesNotCheck(hash: String) {
    #expect(!Bcrypt.isWellFormed(Array(hash.utf8)))
    #expect(!Bcrypt.verify(password: Array("correct horse".utf8), hash: Array(hash.utf8)))
  }
}
