import AnonAuthTestSupport
import Foundation
import Testing

@testable import AnonAuthCrypto

/// The byte parser against Foundation's `JSONSerialization`, which the token path used
/// before: the same documents accepted, the same values, on hand-picked edge cases and on
/// thousands of generated and mutated documents.
@Suite struct JSONParserTests {
  @Test(
    arguments: [
      "{}", "[]", " \t\r\n{ } ", "[1,2]", "[1 , 2 ]", "[1,]", "[,1]", "{\"a\":1,}", "{,}", "{\"a\" 1}",
      "{\"a\":1 \"b\":2}", "{1:2}", "{\"a\":1,\"a\":2}", "[-0]", "[-]", "[01]", "[1.]", "[.1]", "[1e]",
      "[1e+]", "[1E-2]", "[+1]", "[0x10]", "[1.5e308]", "[1e309]", "[-1e309]", "[1e-400]",
      "[9223372036854775808]", "[-9223372036854775809]", "[123456789012345678901234567890]",
      "[true]", "[tru]", "[truex]", "[nul]", "[null ,false]", "[True]", "[NaN]", "[Infinity]",
      "[\"\\u0041\\u00e9\\u20ac\\ud83d\\ude00\"]", "[\"\\ud800\"]", "[\"\\udc00\"]", "[\"\\ud800\\u0041\"]",
      "[\"\\ud800x\"]", "[\"\\u12\"]", "[\"\\u00G0\"]", "[\"\\x\"]", "[\"\\/\\b\\f\\n\\r\\t\\\"\\\\\"]",
      "[\"a\nb\"]", "[\"a\tb\"]", "[\"\\u0000\"]", "[\"unterminated]", "[\"é✓\"]", "\"top\"", "1", "null",
      "{\"a\":[{\"b\":[]}]}", "[[[]]]]", "[[[]]", "", " ", "{}{}", "{} x",
    ])
  func agreesWithFoundationOnEdgeCases(text: String) {
    let bytes = Array(text.utf8)
    #expect(Oracle.agree(JSONValue(jsonBytes: bytes), Oracle.parse(bytes)), "\(text)")
  }

  @Test func duplicateKeysKeepTheLastValue() {
    #expect(JSONValue(jsonBytes: Array(#"{"a":1,"a":2}"#.utf8)) == ["a": 2])
  }

  @Test func surrogateEscapesMustBePaired() {
    #expect(JSONValue(jsonBytes: Array(#"["\ud83d\ude00"]"#.utf8)) == ["😀"])
    for text in [#"["\ud800"]"#, #"["\udc00x"]"#, #"["\ud800\u0041"]"#, #"["\ud83d\ud83d"]"#] {
      #expect(JSONValue(jsonBytes: Array(text.utf8)) == nil, "\(text)")
    }
  }

  @Test func aByteOrderMarkIsSkipped() {
    #expect(JSONValue(jsonBytes: [0xEF, 0xBB, 0xBF] + Array("[1]".utf8)) == [1])
  }

  /// Escapes split raw UTF-8 sequences into invalid text, never into valid text.
  @Test func rawBytesAroundEscapesAreValidatedTogether() {
    let broken: [UInt8] = Array(#"[""#.utf8) + [0xC3] + Array(#"\u00a9"]"#.utf8)
    #expect(JSONValue(jsonBytes: broken) == nil)
    let whole: [UInt8] = Array(#"[""#.utf8) + [0xC3, 0xA9] + Array(#"\n"]"#.utf8)
    #expect(JSONValue(jsonBytes: whole) == ["é\n"])
  }

  @Test func nestingIsBoundedAtTheDocumentedDepth() {
    func nested(_ depth: Int) -> [UInt8] {
      [UInt8](repeating: UInt8(ascii: "["), count: depth)
        + [UInt8](repeating: UInt8(ascii: "]"), count: depth)
    }
    #expect(JSONValue(jsonBytes: nested(512)) != nil)
    #expect(JSONValue(jsonBytes: nested(513)) == nil)
  }

  /// Generated documents (random nesting, whitespace, escapes and number spellings), each
  /// also with one byte deleted, inserted or replaced: both parsers give the same answer.
  @Test func agreesWithFoundationOnGeneratedDocuments() {
    var random = SplitMix64(seed: 0x5EED_0F_15_0A)
    var accepted = 0
    var refused = 0
    for _ in 0..<3000 {
      var text: [UInt8] = []
      Generator.document(into: &text, random: &random)
      var variants = [text]
      if !text.isEmpty {
        let position = Int(random.next() % UInt64(text.count))
        let byte = Generator.interestingBytes[Int(random.next() % UInt64(Generator.interestingBytes.count))]
        var deleted = text
        deleted.remove(at: position)
        var inserted = text
        inserted.insert(byte, at: position)
        var replaced = text
        replaced[position] = byte
        variants += [deleted, inserted, replaced]
      }
      for bytes in variants {
        let ours = JSONValue(jsonBytes: bytes)
        let theirs = Oracle.parse(bytes)
        #expect(Oracle.agree(ours, theirs), "\(bytes)")
        if ours == nil { refused += 1 } else { accepted += 1 }
      }
    }
    // Both kinds of answer were exercised in quantity.
    #expect(accepted > 3000)
    #expect(refused > 3000)
  }
}

/// Foundation's parser and the conversion the token path used with it.
private enum Oracle {
  /// Equal, except that doubles may differ in the last bits: Foundation does not always
  /// round long decimals to the nearest double (it gave 123456789.12356786 for
  /// 123456789.12356789, whose nearest double is 123456789.1235679); the standard library
  /// conversion the parser uses does.
  static func agree(_ ours: JSONValue?, _ theirs: JSONValue?) -> Bool {
    switch (ours, theirs) {
    case (nil, nil): return true
    case (.double(let a)?, .double(let b)?): return abs(a - b) <= 4 * max(a.ulp, b.ulp)
    case (.array(let a)?, .array(let b)?):
      return a.count == b.count && zip(a, b).allSatisfy { agree($0, $1) }
    case (.object(let a)?, .object(let b)?):
      return a.count == b.count && a.allSatisfy { key, value in b[key].map { agree(value, $0) } ?? false }
    default: return ours == theirs
    }
  }

  static func parse(_ bytes: [UInt8]) -> JSONValue? {
    guard !foundationLeniency(bytes) else { return nil }
    guard let object = try? JSONSerialization.jsonObject(with: Data(bytes)) else { return nil }
    return JSONValue(foundation: object)
  }

  /// Foundation accepts things the parser refuses: a comma before `]` or `}` (RFC 8259
  /// does not allow it), and a number beyond a double's range when a later duplicate key
  /// replaces it.
  static func foundationLeniency(_ bytes: [UInt8]) -> Bool {
    var inString = false
    var escaped = false
    var lastOutside: UInt8 = 0
    var number = ""
    for byte in bytes {
      if !inString, Array("+-.0123456789eE".utf8).contains(byte) {
        number.append(Character(Unicode.Scalar(byte)))
      } else {
        if let value = Double(number), !value.isFinite { return true }
        number = ""
      }
      if inString {
        if escaped {
          escaped = false
        } else if byte == UInt8(ascii: "\\") {
          escaped = true
        } else if byte == UInt8(ascii: "\"") {
          inString = false
        }
        continue
      }
      switch byte {
      case 0x20, 0x09, 0x0A, 0x0D: continue
      case UInt8(ascii: "\""): inString = true
      case UInt8(ascii: "]"), UInt8(ascii: "}"): if lastOutside == UInt8(ascii: ",") { return true }
      default: break
      }
      lastOutside = byte
    }
    return false
  }
}

/// Random JSON text in many spellings.
private enum Generator {
  static let interestingBytes: [UInt8] =
    Array("{}[],:\"\\ 0-1.eE+tfnu\t\nx".utf8) + [0x00, 0x1F, 0x7F, 0xC3, 0xA9, 0xFF]

  static func document(into out: inout [UInt8], random: inout SplitMix64) {
    space(into: &out, random: &random)
    if random.next() % 2 == 0 {
      object(into: &out, depth: 0, random: &random)
    } else {
      array(into: &out, depth: 0, random: &random)
    }
    space(into: &out, random: &random)
  }

  static func space(into out: inout [UInt8], random: inout SplitMix64) {
    for _ in 0..<(random.next() % 3) { out.append([0x20, 0x09, 0x0A, 0x0D][Int(random.next() % 4)]) }
  }

  static func value(into out: inout [UInt8], depth: Int, random: inout SplitMix64) {
    switch random.next() % (depth > 4 ? 6 : 8) {
    case 0: out += Array("null".utf8)
    case 1: out += Array((random.next() % 2 == 0 ? "true" : "false").utf8)
    case 2, 3: number(into: &out, random: &random)
    case 4, 5: string(into: &out, random: &random)
    case 6: array(into: &out, depth: depth + 1, random: &random)
    default: object(into: &out, depth: depth + 1, random: &random)
    }
  }

  static func array(into out: inout [UInt8], depth: Int, random: inout SplitMix64) {
    list(into: &out, "[", "]", random: &random) { out, random in
      value(into: &out, depth: depth, random: &random)
      space(into: &out, random: &random)
    }
  }

  static func object(into out: inout [UInt8], depth: Int, random: inout SplitMix64) {
    list(into: &out, "{", "}", random: &random) { out, random in
      string(into: &out, random: &random)
      space(into: &out, random: &random)
      out.append(UInt8(ascii: ":"))
      space(into: &out, random: &random)
      value(into: &out, depth: depth, random: &random)
    }
  }

  /// Up to three comma-separated elements between `open` and `close`, each after a run of
  /// white space.
  static func list(
    into out: inout [UInt8], _ open: Unicode.Scalar, _ close: Unicode.Scalar, random: inout SplitMix64,
    element: (inout [UInt8], inout SplitMix64) -> Void
  ) {
    out.append(UInt8(ascii: open))
    let count = random.next() % 4
    for index in 0..<count {
      if index > 0 { out.append(UInt8(ascii: ",")) }
      space(into: &out, random: &random)
      element(&out, &random)
    }
    out.append(UInt8(ascii: close))
  }

  static func number(into out: inout [UInt8], random: inout SplitMix64) {
    let spellings = [
      "0", "-0", "7", "-42", "1.5", "-0.25", "1e3", "2E-2", "6.02e+23", "9223372036854775807",
      "-9223372036854775808", "9223372036854775808", "18446744073709551616", "1e308", "4.9e-324",
      "123456789.123456789", "100",
    ]
    out += Array(spellings[Int(random.next() % UInt64(spellings.count))].utf8)
  }

  static func string(into out: inout [UInt8], random: inout SplitMix64) {
    let pieces = [
      "a", "key", "é", "✓", "😀", "\\\"", "\\\\", "\\/", "\\n", "\\t", "\\u0041", "\\u00e9", "\\ud83d\\ude00",
      "\\u0000", "sub", "firebase", " ",
    ]
    out.append(UInt8(ascii: "\""))
    for _ in 0..<(random.next() % 4) { out += Array(pieces[Int(random.next() % UInt64(pieces.count))].utf8) }
    out.append(UInt8(ascii: "\""))
  }
}
