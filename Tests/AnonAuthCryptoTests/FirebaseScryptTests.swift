import AnonAuthCrypto
import Foundation
import Testing

/// Firebase's modified scrypt against Firebase's published example and a vector made
/// independently with Python's hashlib.scrypt and the `cryptography` package's AES-CTR.
@Suite struct FirebaseScryptTests {
  static func bytes(_ base64: String) -> [UInt8] { Array(Data(base64Encoded: base64) ?? Data()) }

  static let published = (
    signerKey: bytes(
      "jxspr8Ki0RYycVU8zykbdLGjFQ3McFUH0uiiTvC8pVMXAn210wjLNmdZJzxUECKbm0QsEmYUSDzZvpjeJ9WmXA=="),
    separator: bytes("Bw=="), salt: bytes("42xEC+ixf3L2lw=="),
    hash: bytes("lSrfV15cpx95/sZS2W9c9Kp6i/LVgQNDNC/qzrCnh1SAyZvqmZqAjTdn3aoItz+VHjoZilo78198JAdRuid5lQ==")
  )

  @Test func firebasesPublishedExampleVerifies() throws {
    let config = try FirebaseScrypt(
      signerKey: Self.published.signerKey, saltSeparator: Self.published.separator, rounds: 8, memCost: 14)
    #expect(
      try config.hash(password: Array("user1password".utf8), salt: Self.published.salt) == Self.published.hash
    )
    #expect(
      config.verify(
        password: Array("user1password".utf8), salt: Self.published.salt, hash: Self.published.hash))
    #expect(
      !config.verify(
        password: Array("user1passwore".utf8), salt: Self.published.salt, hash: Self.published.hash))
    #expect(!config.verify(password: Array("user1password".utf8), salt: [0x01], hash: Self.published.hash))
  }

  @Test func aVectorFromPythonsHashlib() throws {
    // hashlib.scrypt(password, salt=salt+b"", n=2**10, r=4, p=1, dklen=64), then AES-256-CTR
    // with key dk[:32] and a zero IV over the signer key b"short signer key".
    let config = try FirebaseScrypt(
      signerKey: Array("short signer key".utf8), saltSeparator: [], rounds: 4, memCost: 10)
    let salt: [UInt8] = [0x00, 0x01] + Array("salt".utf8) + [0xff]
    #expect(
      try config.hash(password: Array("pässwörd 2".utf8), salt: salt)
        == Self.bytes("A3AP4P7gXEuWJ6kTOpoYoA=="))
  }

  @Test(arguments: [(0, 14), (9, 14), (8, 0), (8, 15), (-1, -1)])
  func parametersOutsideFirebasesRangesAreRefused(rounds: Int, memCost: Int) {
    #expect(throws: CryptoError.self) {
      try FirebaseScrypt(signerKey: [1], saltSeparator: [], rounds: rounds, memCost: memCost)
    }
  }

  @Test func anEmptySignerKeyIsRefused() {
    #expect(throws: CryptoError.self) {
      try FirebaseScrypt(signerKey: [], saltSeparator: [], rounds: 8, memCost: 14)
    }
  }
}
