import AnonAuthCrypto
import Testing

@Suite struct JSONValueTests {
  /// Runs of clean bytes are skipped eight at a time: a byte to escape (or one that is
  /// close to one but clean: 0x20, 0x7F, UTF-8's high bytes) at every place of a word,
  /// with clean bytes on either side, and a string that ends in a partial word.
  static let wordBoundaryCases: [String] = [
    "\"", "\\", "\u{00}", "\u{1F}", " ", "\u{7F}", "é", "!", "#", "[", "]",
  ]
  .flatMap { special in
    (0..<17).map { place in
      String(repeating: "x", count: place) + special + String(repeating: "y", count: 19 - place)
    }
  }

  @Test(
    arguments: [
      (JSONValue.null, "null"), (true, "true"), (false, "false"), (0, "0"), (-42, "-42"),
      (.int(Int64.max), "9223372036854775807"), (.int(Int64.min), "-9223372036854775808"),
      (1.5, "1.5"), (1.0, "1.0"), (1e-5, "1e-05"), ("", "\"\""),
      ("a\"b\\c\n\t\u{01}é/", "\"a\\\"b\\\\c\\n\\t\\u0001é/\""),
      ([], "[]"), ([1, "x", nil], "[1,\"x\",null]"),
      (["b": 1, "a": ["c": true, "A": false]], "{\"a\":{\"A\":false,\"c\":true},\"b\":1}"),
    ] as [(JSONValue, String)])
  func encodesCompactSortedJSON(value: JSONValue, text: String) {
    #expect(value.jsonText == text)
  }

  /// Strings are copied in runs between escapes: escapes first, last, adjacent and alone,
  /// and every byte below 0x80, must come out as the one-byte-at-a-time rule says.
  @Test(
    arguments: [
      "", "\"", "\\\\", "plain", "\nstart", "end\u{1F}", "a\"\"b", "\u{00}\u{7F}é✓\u{0B}",
      String(decoding: (0..<128).map { UInt8($0) }, as: UTF8.self),
      String(repeating: "eyJhbGciOiJSUzI1NiJ9-_", count: 50) + "\t",
    ] + wordBoundaryCases)
  func stringsMatchTheByteByByteRule(text: String) {
    var expected = "\""
    for scalar in text.unicodeScalars {
      switch scalar {
      case "\"": expected += "\\\""
      case "\\": expected += "\\\\"
      case "\n": expected += "\\n"
      case "\r": expected += "\\r"
      case "\t": expected += "\\t"
      case "\u{08}": expected += "\\b"
      case "\u{0C}": expected += "\\f"
      case let control where control.value < 0x20:
        expected += "\\u00" + (control.value < 0x10 ? "0" : "") + String(control.value, radix: 16)
      default: expected.unicodeScalars.append(scalar)
      }
    }
    expected += "\""
    #expect(JSONValue.quoted(text) == expected)
    #expect(JSONValue.string(text).jsonText == expected)
  }

  @Test func nonFiniteDoublesBecomeNull() {
    #expect(JSONValue.array([.double(.nan), .double(.infinity)]).jsonText == "[null,null]")
  }

  /// Claims in Firebase's shape round-trip unchanged, booleans stay booleans and 0/1 stay
  /// numbers.
  @Test func firebaseClaimsRoundTrip() throws {
    let claims: JSONValue = [
      "iat": 1_700_000_000, "exp": 1_700_003_600, "email_verified": true, "admin": false,
      "zero": 0, "one": 1, "ratio": 0.25, "unicode": "Ünïcödé ✓", "nothing": nil,
      "firebase": [
        "identities": ["email": ["a@example.com"], "google.com": ["1234567890"]],
        "sign_in_provider": "google.com",
      ],
      "roles": ["admin", "editor"], "nested": ["deep": [[1, 2], [true, nil]]],
    ]
    let decoded = try #require(JSONValue(jsonBytes: claims.jsonBytes))
    #expect(decoded == claims)
    #expect(decoded.jsonText == claims.jsonText)
    #expect(decoded["iat"]?.int64Value == 1_700_000_000)
    #expect(decoded["one"] == .int(1))
    #expect(decoded["email_verified"] == .bool(true))
  }

  @Test(
    arguments: [
      ("[1.0]", JSONValue.array([.double(1.0)])), ("[1e3]", [.double(1000)]),
      ("[9223372036854775807]", [.int(Int64.max)]), ("[-9223372036854775808]", [.int(Int64.min)]),
      ("[18446744073709551615]", [.double(18_446_744_073_709_551_616)]),
      ("[true,1,false,0]", [true, 1, false, 0]),
    ] as [(String, JSONValue)])
  func decodesNumbersFaithfully(text: String, value: JSONValue) {
    #expect(JSONValue(jsonBytes: Array(text.utf8)) == value)
  }

  @Test(arguments: ["", "{", "{\"a\":}", "[1e400]", "\u{FF}", "{\"a\":1}x"])
  func rejectsInvalidJSON(text: String) {
    #expect(JSONValue(jsonBytes: Array(text.utf8)) == nil)
  }

  @Test(arguments: [[0x7b, 0xff, 0x7d], [0x5b, 0x22, 0xc3, 0x22, 0x5d]] as [[UInt8]])
  func rejectsInvalidUTF8(bytes: [UInt8]) {
    #expect(JSONValue(jsonBytes: bytes) == nil)
  }

  @Test func loneSurrogateEscapesAreRefused() {
    #expect(JSONValue(jsonBytes: Array(#"["\ud800", "\udc00x"]"#.utf8)) == nil)
  }

  @Test func int64ValueAcceptsIntegralDoublesOnly() {
    #expect(JSONValue.double(3.0).int64Value == 3)
    #expect(JSONValue.double(3.5).int64Value == nil)
    #expect(JSONValue.double(1e19).int64Value == nil)
    #expect(JSONValue.string("3").int64Value == nil)
  }
}
