import AnonAuthTestSupport
import AnonAuthWire
import Testing

/// Decoding faces the network: every bad input must throw `.malformed`, never trap.
@Suite("Malformed input is rejected without crashing")
struct MalformedInputTests {
  @Test("garbage bytes throw malformed", arguments: Fixtures.empty)
  func garbage(_ sample: Sample) {
    expectMalformed([0xff, 0xff, 0xff], as: sample.message)
  }

  @Test(
    "specific broken encodings throw malformed",
    arguments: [
      ("unterminated varint", [0x08, 0x96]),
      ("length beyond the end", [0x12, 0x05, 0x61]),
      ("truncated fixed64 unknown field", [0xb1, 0x06, 1, 2, 3]),
      ("truncated fixed32 unknown field", [0xad, 0x06, 1]),
      ("start-group wire type", [0x0b]),
      ("end-group wire type", [0x0c]),
      ("wire types 6 and 7", [0x0e, 0x00]),
      ("eleven-byte varint", [0x08] + Array(repeating: 0xff, count: 10) + [0x01]),
      ("string field sent as varint", [0x10, 0x01]),
      ("varint field sent as bytes", [0x0a, 0x00]),
      ("nested message cut short", [0x2a, 0x03, 0x08]),
      ("map entry cut short", [0x1a, 0x04, 0x0a, 0x05, 0x61, 0x62]),
    ] as [(String, [UInt8])])
  func broken(_ name: String, _ bytes: [UInt8]) {
    expectMalformed(bytes, as: Call())
  }

  @Test("a frame whose call payload is cut short throws")
  func truncatedNested() {
    let bytes = Frame(kind: .call(Fixtures.call)).serializedBytes()
    expectMalformed(Array(bytes.dropLast()), as: Frame())
    expectMalformed(Array(bytes.dropLast(bytes.count / 2)), as: Frame())
  }

  @Test(
    "every prefix of a valid encoding decodes or throws, and never traps",
    arguments: Fixtures.populated)
  func prefixes(_ sample: Sample) {
    checkPrefixes(of: sample.message)
  }

  @Test("random bytes decode or throw; what decodes re-encodes stably", arguments: Fixtures.empty)
  func random(_ sample: Sample) throws {
    var generator = SplitMix64(seed: sample.name)
    for _ in 0..<300 {
      let count = Int(generator.next() % 48)
      let bytes = (0..<count).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
      try checkStable(bytes, as: sample.message)
    }
  }

  @Test(
    "mutated valid encodings decode or throw; what decodes re-encodes stably",
    arguments: Fixtures.populated)
  func mutated(_ sample: Sample) throws {
    var generator = SplitMix64(seed: sample.name)
    let original = sample.message.serializedBytes()
    for _ in 0..<200 {
      var bytes = original
      for _ in 0...(generator.next() % 3) {
        let position = bytes.isEmpty ? 0 : Int(generator.next() % UInt64(bytes.count))
        let byte = UInt8(truncatingIfNeeded: generator.next())
        switch generator.next() % 3 {
        case 0 where !bytes.isEmpty: bytes[position] = byte
        case 1 where !bytes.isEmpty: bytes.remove(at: position)
        default: bytes.insert(byte, at: position)
        }
      }
      try checkStable(bytes, as: sample.message)
    }
  }

  @Test("invalid UTF-8 in a string field is repaired, not trusted and not fatal")
  func invalidUTF8() throws {
    let call = try Call(serializedBytes: [0x12, 0x04, 0xff, 0xfe, 0x61, 0xc3])
    #expect(call.method == "\u{FFFD}\u{FFFD}a\u{FFFD}")
    let status = try Status(serializedBytes: [0x22, 0x06, 0x0a, 0x01, 0x80, 0x12, 0x01, 0xc0])
    #expect(status.details == ["\u{FFFD}": "\u{FFFD}"])
  }

  private func expectMalformed<M: ProtoMessage>(_ bytes: [UInt8], as _: M) {
    #expect(throws: ProtoDecodingError.malformed) { try M(serializedBytes: bytes) }
  }

  private func checkPrefixes<M: ProtoMessage>(of message: M) {
    let bytes = message.serializedBytes()
    for end in 0..<bytes.count {
      _ = try? M(serializedBytes: Array(bytes[..<end]))
    }
    if let last = bytes.indices.last {
      // The last byte always belongs to an unfinished field.
      #expect(throws: ProtoDecodingError.malformed) {
        try M(serializedBytes: Array(bytes[..<last]))
      }
    }
  }

  private func checkStable<M: ProtoMessage>(_ bytes: [UInt8], as _: M) throws {
    guard let decoded = try? M(serializedBytes: bytes) else { return }
    let again = try M(serializedBytes: decoded.serializedBytes())
    #expect(again == decoded, "bytes: \(bytes)")
  }
}
