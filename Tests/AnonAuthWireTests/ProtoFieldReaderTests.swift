import Testing

@testable import AnonAuthWire

/// The one varint reader and field walker (`ProtoVarint.read`, `ProtoWireWalker`), as the
/// pre-scan, the gRPC standard services and the client's status details read through
/// them: never stricter than protobuf-c, never past the bytes given.
@Suite struct ProtoFieldReaderTests {
  @Test func aVarintIsReadFromWhereItStarts() {
    let bytes: [UInt8] = [0xff, 0xac, 0x02, 0x07]
    #expect(ProtoVarint.read(bytes, at: 1)?.value == 300)
    #expect(ProtoVarint.read(bytes, at: 1)?.end == 3)
    #expect(ProtoVarint.read(bytes[3...], at: 3)?.value == 7)
    #expect(ProtoVarint.read(bytes[3...], at: 3)?.end == 4)
    #expect(ProtoVarint.read(bytes, at: 4) == nil)
  }

  @Test func bitsPastTheSixtyFourthAreDroppedAndAnEleventhByteIsRefused() {
    let ten = [UInt8](repeating: 0xff, count: 9) + [0x7f]
    #expect(ProtoVarint.read(ten, at: 0)?.value == UInt64.max)
    #expect(ProtoVarint.read(ten, at: 0)?.end == 10)
    let eleven = [UInt8](repeating: 0xff, count: 10) + [0x01]
    #expect(ProtoVarint.read(eleven, at: 0) == nil)
    #expect(ProtoVarint.read([0x80, 0x80], at: 0) == nil)
  }

  @Test func fieldsOfEveryWireTypeAreWalkedAndSliced() {
    var bytes: [UInt8] = []
    ProtoVarint.append(1 << 3, to: &bytes)
    ProtoVarint.append(150, to: &bytes)
    ProtoVarint.append(2 << 3 | 2, to: &bytes)
    ProtoVarint.append(3, to: &bytes)
    bytes += Array("abc".utf8)
    ProtoVarint.append(3 << 3 | 5, to: &bytes)
    bytes += [1, 2, 3, 4]
    var reader = ProtoFieldReader(bytes)
    #expect(reader.next()?.value.integer == 150)
    let text = reader.next()
    #expect(text?.number == 2)
    #expect(text?.value.string == "abc")
    #expect(reader.next()?.value == .fixed)
    #expect(reader.next() == nil)
    #expect(!reader.failed)
  }

  @Test(arguments: [
    [0x0a, 0x05, 0x61] as [UInt8],  // a length past the end
    [0x0b],  // a group marker
    [0x0d, 0x01, 0x02],  // a truncated fixed32
    [0x08, 0x80],  // a truncated varint
  ])
  func whatCannotBeFollowedFailsWithoutTrapping(bytes: [UInt8]) {
    var reader = ProtoFieldReader(bytes)
    #expect(reader.next() == nil)
    #expect(reader.failed)
    #expect(reader.next() == nil)
  }
}
