import AnonAuthCrypto
import Testing

@Suite struct HashingTests {
  @Test(arguments: [
    ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
    ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
    (
      "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
      "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
    ),
  ])
  func sha256KnownVectors(input: String, digest: String) {
    #expect(SHA256.hash(Array(input.utf8)).hex == digest)
  }

  @Test(arguments: [
    // RFC 4231 test cases 1 and 2.
    (
      [UInt8](repeating: 0x0b, count: 20), "Hi There",
      "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"
    ),
    (
      Array("Jefe".utf8), "what do ya want for nothing?",
      "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
    ),
    // An empty key and message must not trip OpenSSL.
    ([], "", "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad"),
  ])
  func hmacKnownVectors(key: [UInt8], message: String, mac: String) {
    #expect(HMACSHA256.authenticationCode(key: key, message: Array(message.utf8)).hex == mac)
  }

  @Test(
    arguments: [
      ([], [], true),
      ([1, 2, 3], [1, 2, 3], true),
      ([1, 2, 3], [1, 2, 4], false),
      ([0, 2, 3], [1, 2, 3], false),
      ([1, 2, 3], [1, 2], false),
      ([], [0], false),
    ] as [([UInt8], [UInt8], Bool)])
  func constantTimeEquals(a: [UInt8], b: [UInt8], equal: Bool) {
    #expect(ConstantTime.equals(a, b) == equal)
    #expect(ConstantTime.equals(b, a) == equal)
  }
}
