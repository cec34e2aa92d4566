import AnonAuthWire
import Testing

/// Expected bytes worked out by hand from the protobuf encoding rules, so that the bridge
/// is checked against the wire format itself and not only against itself.
@Suite("Encodings match the protobuf wire format")
struct WireFormatTests {
  @Test("Ping{nonce: 150} is the textbook varint example")
  func ping() throws {
    #expect(Ping(nonce: 150).serializedBytes() == [0x08, 0x96, 0x01])
    #expect(try Ping(serializedBytes: [0x08, 0x96, 0x01]) == Ping(nonce: 150))
  }

  @Test("Call{id, method}: a varint field, then a length-delimited string")
  func call() throws {
    let bytes: [UInt8] = [0x08, 0x07, 0x12, 0x06] + Array("/a.B/C".utf8)
    #expect(Call(id: 7, method: "/a.B/C").serializedBytes() == bytes)
    #expect(try Call(serializedBytes: bytes) == Call(id: 7, method: "/a.B/C"))
  }

  @Test("a map is repeated entry messages {key = 1, value = 2}, in key order")
  func map() {
    let bytes = Call(metadata: ["b": "2", "a": "1"]).serializedBytes()
    let entryA: [UInt8] = [0x1a, 0x06, 0x0a, 0x01, 0x61, 0x12, 0x01, 0x31]
    let entryB: [UInt8] = [0x1a, 0x06, 0x0a, 0x01, 0x62, 0x12, 0x01, 0x32]
    #expect(bytes == entryA + entryB)
  }

  @Test("map<string, uint64> values are varints")
  func uint64Map() {
    let bytes = DailySignUps(byProvider: ["anonymous": 300]).serializedBytes()
    let entry: [UInt8] = [0x0a, 0x09] + Array("anonymous".utf8) + [0x10, 0xac, 0x02]
    #expect(bytes == [0x12, UInt8(entry.count)] + entry)
  }

  @Test("a set oneof member is written even when it is an empty message")
  func oneofPresence() {
    #expect(Frame(kind: .ping(Ping())).serializedBytes() == [0x1a, 0x00])
    #expect(Frame(kind: .ping(Ping(nonce: 1))).serializedBytes() == [0x1a, 0x02, 0x08, 0x01])
    #expect(SignUpRequest(kind: .anonymous(AnonymousSignUp())).serializedBytes() == [0x0a, 0x00])
    #expect(Frame().serializedBytes() == [])
  }

  @Test("a present but empty nested message is written; an absent one is not")
  func nestedPresence() {
    #expect(Reply(status: Status()).serializedBytes() == [0x12, 0x00])
    #expect(Reply().serializedBytes() == [])
  }

  @Test("negative int32 values take ten bytes, as in every protobuf runtime")
  func negativeInt32() throws {
    let bytes: [UInt8] = [0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]
    #expect(Status(code: -1).serializedBytes() == bytes)
    #expect(try Status(serializedBytes: bytes).code == -1)
  }

  @Test("bools are varint 1, and false is not written")
  func bools() throws {
    #expect(AccountInfo(isAnonymous: true).serializedBytes() == [0x10, 0x01])
    #expect(AccountInfo(isAnonymous: false).serializedBytes() == [])
    #expect(try AccountInfo(serializedBytes: [0x10, 0x05]).isAnonymous)
  }

  @Test("enums are varints of their raw value")
  func enums() throws {
    #expect(ListAccountsRequest(filter: .permanent).serializedBytes() == [0x10, 0x02])
    #expect(try ListAccountsRequest(serializedBytes: [0x10, 0x09]).filter.rawValue == 9)
  }

  @Test("repeated strings are one field per element, in order")
  func repeatedStrings() throws {
    let bytes: [UInt8] = [0x0a, 0x01, 0x78, 0x0a, 0x00, 0x0a, 0x01, 0x79]
    #expect(ListApiKeysResponse(apiKeys: ["x", "", "y"]).serializedBytes() == bytes)
    #expect(try ListApiKeysResponse(serializedBytes: bytes).apiKeys == ["x", "", "y"])
  }

  @Test("on decode, the last of repeated singular fields and of duplicate map keys wins")
  func lastOneWins() throws {
    #expect(try Ping(serializedBytes: [0x08, 0x01, 0x08, 0x02]).nonce == 2)
    let entry1: [UInt8] = [0x1a, 0x06, 0x0a, 0x01, 0x6b, 0x12, 0x01, 0x31]
    let entry2: [UInt8] = [0x1a, 0x06, 0x0a, 0x01, 0x6b, 0x12, 0x01, 0x32]
    #expect(try Call(serializedBytes: entry1 + entry2).metadata == ["k": "2"])
    let frame = try Frame(serializedBytes: [0x1a, 0x02, 0x08, 0x01, 0x22, 0x02, 0x08, 0x02])
    #expect(frame.kind == .pong(Pong(nonce: 2)))
  }

  @Test("fields may arrive in any order")
  func fieldOrder() throws {
    let bytes: [UInt8] = [0x12, 0x01, 0x6d, 0x08, 0x03]
    #expect(try Call(serializedBytes: bytes) == Call(id: 3, method: "m"))
  }
}
