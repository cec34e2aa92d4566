import AnonAuthWire
import Testing

@Suite("Strings and bytes cross the C boundary whole")
struct StringAndBytesTests {
  @Test("bytes with all 256 values, and empty bytes")
  func allByteValues() throws {
    let call = Call(payload: Fixtures.allByteValues)
    let bytes = call.serializedBytes()
    #expect(bytes.prefix(3) == [0x2a, 0x80, 0x02])
    #expect(Array(bytes.dropFirst(3)) == Fixtures.allByteValues)
    #expect(try Call(serializedBytes: bytes).payload == Fixtures.allByteValues)
    #expect(try Call(serializedBytes: [0x2a, 0x00]).payload == [])
  }

  @Test(
    "unicode strings are sent as their UTF-8 bytes",
    arguments: [Fixtures.unicode, "é", "e\u{301}", "🏳️‍🌈", "\u{FFFF}", "\u{10FFFF}", "日本語"])
  func unicode(_ text: String) throws {
    let utf8 = Array(text.utf8)
    let bytes = GoAway(reason: text).serializedBytes()
    #expect(bytes == [0x12, UInt8(utf8.count)] + utf8)
    let decoded = try GoAway(serializedBytes: bytes)
    #expect(Array(decoded.reason.utf8) == utf8)
  }

  @Test("a string with NUL is sent whole, at the same field number")
  func nulString() throws {
    let text = "victim@example.com\u{0}attacker"
    let bytes = GoAway(reason: text).serializedBytes()
    #expect(bytes == [0x12, UInt8(text.utf8.count)] + Array(text.utf8))
    let decoded = try GoAway(serializedBytes: bytes)
    #expect(decoded.reason == text)
    #expect(decoded.unknownFields == [])
  }

  @Test(
    "NUL survives in every kind of string field",
    arguments: [
      Sample("plain field", Call(id: 1, method: "a\u{0}b", metadata: ["k": "v"], timeoutMs: 2)),
      Sample("only NUL", Call(method: "\u{0}")),
      Sample("map key and value", Call(metadata: ["a\u{0}": "\u{0}b", "plain": "value"])),
      Sample(
        "repeated", DeleteAccountsRequest(projectId: "p", localIds: ["x", "a\u{0}b", "", "y"])),
      Sample("nested", Frame(kind: .goAway(GoAway(lastCallId: 3, reason: "\u{0}\u{0}")))),
      Sample(
        "oneof member's field",
        SignUpRequest(kind: .emailPassword(.init(email: "a\u{0}@b", password: "p\u{0}")))),
    ])
  func nulEverywhere(_ sample: Sample) throws {
    try expectRoundTrip(sample.message)
  }

  @Test("a NUL-bearing string decodes the same from a canonical encoding")
  func nulFromCanonicalBytes() throws {
    // What any other runtime sends: field 2 first, then field 3 with one entry.
    let bytes: [UInt8] =
      [0x12, 0x03, 0x61, 0x00, 0x62] + [0x1a, 0x05, 0x0a, 0x03, 0x6b, 0x00, 0x6b]
    let call = try Call(serializedBytes: bytes)
    #expect(call.method == "a\u{0}b")
    #expect(call.metadata == ["k\u{0}k": ""])
    #expect(call.unknownFields == [])
  }

  private func expectRoundTrip<M: ProtoMessage>(_ message: M) throws {
    let bytes = message.serializedBytes()
    let decoded = try M(serializedBytes: bytes)
    #expect(decoded == message)
    #expect(decoded.unknownFields == [])
    #expect(decoded.serializedBytes() == bytes)
  }
}
