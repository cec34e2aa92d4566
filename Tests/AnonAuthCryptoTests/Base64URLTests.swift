import AnonAuthCrypto
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
}
