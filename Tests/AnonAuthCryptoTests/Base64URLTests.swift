import AnonAuthCrypto
import Foundation
import Testing

@Suite struct Base64URLTests {
  @Test(
    arguments: [
      ([], ""), ([0xfb], "-w"), ([0xfb, 0xff], "-_8"), ([0xfb, 0xff, 0xbf], "-_-_"),
      (Array("hello".utf8), "aGVsbG8"),
    ] as [([UInt8], String)])
  func roundTrip(bytes: [UInt8], text: String) {
    #expect(Base64URL.encode(bytes) == text)
    #expect(Base64URL.decode(text) == bytes)
  }

  /// Padding, the standard alphabet, whitespace, impossible lengths and non-zero unused
  /// bits ("-x" decodes to the same byte as "-w" in lax decoders) are all refused.
  @Test(arguments: ["aGVsbG8=", "+w", "/w", "aGVs bG8", "a", "aGVsb", "-x", "-_9", "é"])
  func rejectsNonCanonical(text: String) {
    #expect(Base64URL.decode(text) == nil)
  }

  /// Every length from 0 to 99 (each remainder, both table paths) against Foundation's
  /// encoder turned into base64url.
  @Test func agreesWithFoundationAtEveryLength() throws {
    var generator = SystemRandomNumberGenerator()
    for length in 0..<100 {
      let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
      let expected = Data(bytes).base64EncodedString()
        .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        .replacingOccurrences(of: "=", with: "")
      #expect(Base64URL.encode(bytes) == expected)
      #expect(Base64URL.decode(expected) == bytes)
    }
  }

  /// A byte outside the alphabet is refused wherever it stands: in a full group of four
  /// and in the short last group.
  @Test func rejectsAForeignByteAtEveryPosition() {
    let text = Array(Base64URL.encode(Array(0..<32)).utf8)  // 43 characters: 10 groups + 3
    for position in text.indices {
      for foreign in [UInt8(ascii: "="), UInt8(ascii: "+"), UInt8(ascii: "."), 0x00, 0x80, 0xFF] {
        var altered = text
        altered[position] = foreign
        #expect(Base64URL.decode(String(decoding: altered, as: UTF8.self)) == nil)
      }
    }
  }
}
