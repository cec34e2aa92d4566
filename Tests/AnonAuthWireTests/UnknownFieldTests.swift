import AnonAuthWire
import Testing

@Suite("Unknown fields survive decode and re-encode")
struct UnknownFieldTests {
  /// Field 99 as a varint: tag (99 << 3 | 0) = 792 = 0x98 0x06, then the value 7.
  static let field99Varint: [UInt8] = [0x98, 0x06, 0x07]
  /// Field 100, length-delimited "hi": tag 802 = 0xa2 0x06.
  static let field100Bytes: [UInt8] = [0xa2, 0x06, 0x02, 0x68, 0x69]
  /// Field 101, fixed32: tag 813 = 0xad 0x06.
  static let field101Fixed32: [UInt8] = [0xad, 0x06, 0x01, 0x02, 0x03, 0x04]
  /// Field 102, fixed64: tag 817 = 0xb1 0x06.
  static let field102Fixed64: [UInt8] = [0xb1, 0x06, 1, 2, 3, 4, 5, 6, 7, 8]
  static let allKinds = field99Varint + field100Bytes + field101Fixed32 + field102Fixed64

  @Test("a varint field 99 on a Ping is kept and written again after the known fields")
  func varint() throws {
    let bytes: [UInt8] = [0x08, 0x96, 0x01] + Self.field99Varint
    let ping = try Ping(serializedBytes: bytes)
    #expect(ping.nonce == 150)
    let expected = try #require(ProtoUnknownField(fieldNumber: 99, wireType: .varint, bytes: [7]))
    #expect(ping.unknownFields == [expected])
    #expect(ping.serializedBytes() == bytes)
  }

  @Test("every wire type is kept, in arrival order, without length prefixes")
  func allWireTypes() throws {
    let status = try Status(serializedBytes: [0x08, 0x05] + Self.allKinds)
    #expect(status.code == 5)
    #expect(status.unknownFields.map(\.fieldNumber) == [99, 100, 101, 102])
    #expect(
      status.unknownFields.map(\.wireType) == [.varint, .lengthDelimited, .fixed32, .fixed64])
    #expect(status.unknownFields[1].bytes == Array("hi".utf8))
    #expect(status.serializedBytes() == [0x08, 0x05] + Self.allKinds)
  }

  @Test("unknown fields between known ones move after them, and nothing is lost")
  func interleaved() throws {
    let bytes: [UInt8] =
      Self.field99Varint + [0x08, 0x01] + Self.field100Bytes + [0x12, 0x01, 0x6d]
    let call = try Call(serializedBytes: bytes)
    #expect(call.id == 1 && call.method == "m")
    let reencoded = call.serializedBytes()
    #expect(reencoded == [0x08, 0x01, 0x12, 0x01, 0x6d] + Self.field99Varint + Self.field100Bytes)
    #expect(try Call(serializedBytes: reencoded) == call)
  }

  @Test("unknown fields of a nested message stay with that message")
  func nested() throws {
    let call: [UInt8] = [0x08, 0x01] + Self.field99Varint
    let bytes: [UInt8] = [0x0a, UInt8(call.count)] + call + Self.field100Bytes
    let frame = try Frame(serializedBytes: bytes)
    guard case .call(let inner)? = frame.kind else {
      Issue.record("expected a call, got \(String(describing: frame.kind))")
      return
    }
    #expect(inner.unknownFields.map(\.fieldNumber) == [99])
    #expect(frame.unknownFields.map(\.fieldNumber) == [100])
    #expect(frame.serializedBytes() == bytes)
  }

  @Test(
    "a message with no fields keeps everything as unknown",
    arguments: [
      Sample(AnonymousSignUp()), Sample(DeleteAccountResponse()), Sample(CheckRequest()),
      Sample(RotateSigningKeyRequest()), Sample(GetPublicKeysRequest()),
    ])
  func fieldless(_ sample: Sample) throws {
    try expectPreserved(Self.allKinds, as: sample.message)
  }

  @Test("unknown fields survive on every message type", arguments: Fixtures.empty)
  func everyType(_ sample: Sample) throws {
    // Field 536870911, the largest allowed, length-delimited and empty.
    try expectPreserved([0xfa, 0xff, 0xff, 0xff, 0x0f, 0x00], as: sample.message)
  }

  @Test("unknown fields set by hand are encoded with the right tag and prefix")
  func constructed() throws {
    var ping = Ping(nonce: 1)
    ping.unknownFields = [
      try #require(
        ProtoUnknownField(fieldNumber: 100, wireType: .lengthDelimited, bytes: [0x68, 0x69])),
      try #require(ProtoUnknownField(fieldNumber: 99, wireType: .varint, bytes: [0x07])),
    ]
    #expect(ping.serializedBytes() == [0x08, 0x01] + Self.field100Bytes + Self.field99Varint)
  }

  @Test("values that would corrupt an encoding cannot be built")
  func validation() {
    #expect(ProtoUnknownField(fieldNumber: 0, wireType: .varint, bytes: [1]) == nil)
    #expect(ProtoUnknownField(fieldNumber: 1 << 29, wireType: .varint, bytes: [1]) == nil)
    #expect(ProtoUnknownField(fieldNumber: 5, wireType: .varint, bytes: []) == nil)
    #expect(ProtoUnknownField(fieldNumber: 5, wireType: .varint, bytes: [0x80]) == nil)
    #expect(ProtoUnknownField(fieldNumber: 5, wireType: .varint, bytes: [0x01, 0x01]) == nil)
    #expect(
      ProtoUnknownField(
        fieldNumber: 5, wireType: .varint, bytes: Array(repeating: 0x80, count: 10) + [1])
        == nil)
    #expect(ProtoUnknownField(fieldNumber: 5, wireType: .fixed32, bytes: [1, 2, 3]) == nil)
    #expect(ProtoUnknownField(fieldNumber: 5, wireType: .fixed64, bytes: [1, 2, 3, 4]) == nil)
    #expect(ProtoUnknownField(fieldNumber: 5, wireType: .lengthDelimited, bytes: []) != nil)
    #expect(ProtoUnknownField(fieldNumber: 5, wireType: .varint, bytes: [0x80, 0x01]) != nil)
  }

  private func expectPreserved<M: ProtoMessage>(_ bytes: [UInt8], as _: M) throws {
    let decoded = try M(serializedBytes: bytes)
    #expect(decoded.unknownFields.count > 0)
    #expect(decoded.serializedBytes() == bytes)
    #expect(try M(serializedBytes: decoded.serializedBytes()) == decoded)
  }
}
