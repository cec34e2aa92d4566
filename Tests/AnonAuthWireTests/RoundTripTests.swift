import AnonAuthWire
import Foundation
import Testing

@Suite("Round trips through protobuf-c")
struct RoundTripTests {
  @Test(
    "a populated value decodes to itself and re-encodes to the same bytes",
    arguments: Fixtures.populated)
  func populated(_ sample: Sample) throws {
    try expectRoundTrip(sample.message)
  }

  @Test("the empty value encodes to nothing and decodes back", arguments: Fixtures.empty)
  func empty(_ sample: Sample) throws {
    #expect(sample.message.serializedBytes() == [])
    try expectRoundTrip(sample.message)
    try expectEmptyBytesDecodeToDefault(like: sample.message)
  }

  @Test("every message in Protos/ has a fixture")
  func everyMessageIsCovered() throws {
    let declared = try ProtoSources.messageNames()
    let covered = Set(Fixtures.populated.map { type(of: $0.message).protoMessageName })
    #expect(declared.count > 50, "the .proto scan found too few messages: \(declared)")
    #expect(declared.subtracting(covered) == [], "messages without a fixture")
    #expect(covered.subtracting(declared) == [], "fixtures for messages not in Protos/")
  }

  @Test("a decoded message equals the original, field by field")
  func decodedFieldsMatch() throws {
    let bytes = Fixtures.call.serializedBytes()
    let decoded = try Call(serializedBytes: bytes)
    #expect(decoded.id == UInt64.max)
    #expect(decoded.method == "/anonauth.v1.AccountService/SignUp")
    #expect(decoded.metadata == Fixtures.call.metadata)
    #expect(decoded.metadata["x-unicode"] == Fixtures.unicode)
    #expect(decoded.timeoutMs == 30_000)
    #expect(decoded.payload == Fixtures.allByteValues)
    #expect(decoded.unknownFields == [])
  }

  @Test("nested optional messages keep their presence")
  func presence() throws {
    let absent = try Reply(serializedBytes: Reply(id: 1).serializedBytes())
    #expect(absent.status == nil)
    let present = try Reply(serializedBytes: Reply(id: 1, status: Status()).serializedBytes())
    #expect(present.status == Status())
    let auth = try AuthResponse(
      serializedBytes: AuthResponse(account: Fixtures.accountInfo).serializedBytes())
    #expect(auth.account?.providers == Fixtures.providerInfos)
  }

  @Test(
    "each oneof case survives, and unset stays unset",
    arguments: [
      Frame.Kind.call(Fixtures.call), .reply(Fixtures.reply), .ping(Ping(nonce: 1)),
      .pong(Pong()), .goAway(GoAway(reason: "IDLE_TIMEOUT")),
    ] as [Frame.Kind?] + [nil])
  func oneof(_ kind: Frame.Kind?) throws {
    let decoded = try Frame(serializedBytes: Frame(kind: kind).serializedBytes())
    #expect(decoded.kind == kind)
  }

  @Test("enums keep known and unrecognized raw values", arguments: [0, 1, 2, 3, 1000, -1, .max])
  func enumValues(_ raw: Int32) throws {
    let request = ListAccountsRequest(filter: AccountFilter(rawValue: raw))
    let decoded = try ListAccountsRequest(serializedBytes: request.serializedBytes())
    #expect(decoded.filter.rawValue == raw)
    #expect(AccountFilter.knownValues.contains(decoded.filter) == (0...2).contains(raw))
  }

  @Test("map encoding does not depend on dictionary order")
  func mapsAreDeterministic() throws {
    var forward: [String: String] = [:]
    var backward: [String: String] = [:]
    let keys = (0..<50).map { "key-\($0)" }
    for key in keys { forward[key] = key.uppercased() }
    for key in keys.reversed() { backward[key] = key.uppercased() }
    let first = Call(metadata: forward).serializedBytes()
    #expect(first == Call(metadata: backward).serializedBytes())
    #expect(try Call(serializedBytes: first).metadata == forward)
  }

  private func expectRoundTrip<M: ProtoMessage>(_ message: M) throws {
    let bytes = message.serializedBytes()
    let decoded = try M(serializedBytes: bytes)
    #expect(decoded == message)
    #expect(decoded.serializedBytes() == bytes)
  }

  private func expectEmptyBytesDecodeToDefault<M: ProtoMessage>(like _: M) throws {
    #expect(try M(serializedBytes: []) == M())
  }
}

/// Reads the message names out of Protos/ without protoc, so that the coverage check
/// does not trust the generator it checks.
enum ProtoSources {
  static func messageNames() throws -> Set<String> {
    let root = URL(fileURLWithPath: #filePath)
      .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
      .appendingPathComponent("Protos")
    guard let files = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)
    else { return [] }
    var names: Set<String> = []
    for case let file as URL in files where file.pathExtension == "proto" {
      names.formUnion(messageNames(in: try String(contentsOf: file, encoding: .utf8)))
    }
    return names
  }

  /// Top-level and nested `message` declarations, by brace depth.
  static func messageNames(in source: String) -> Set<String> {
    var package = ""
    var names: Set<String> = []
    var stack: [(name: String, depth: Int)] = []
    var depth = 0
    for rawLine in source.split(separator: "\n", omittingEmptySubsequences: false) {
      let line =
        rawLine.split(separator: "//", maxSplits: 1, omittingEmptySubsequences: false)
        .first.map(String.init) ?? ""
      let words = line.split(whereSeparator: { $0 == " " || $0 == "{" || $0 == ";" })
      if words.first == "package", words.count > 1 { package = String(words[1]) }
      if words.first == "message", words.count > 1 {
        let name = (stack.map(\.name) + [String(words[1])]).joined(separator: ".")
        names.insert("\(package).\(name)")
        stack.append((String(words[1]), depth))
      }
      for character in line {
        if character == "{" { depth += 1 }
        if character == "}" {
          depth -= 1
          if let last = stack.last, last.depth == depth { stack.removeLast() }
        }
      }
    }
    return names
  }
}
