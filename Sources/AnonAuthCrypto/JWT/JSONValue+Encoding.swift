extension JSONValue {
  /// Compact JSON text (no spaces, object keys sorted), deterministic for equal values so
  /// that signed tokens and stored claims are reproducible. Non-finite doubles, which JSON
  /// cannot express, become `null`.
  public var jsonText: String { String(decoding: jsonBytes, as: UTF8.self) }

  /// `text` as a JSON string literal, quotes included: shared by everything that writes
  /// JSON by hand (log lines, the daemon's output), so escaping lives in one place.
  public static func quoted(_ text: String) -> String {
    var out: [UInt8] = []
    out.reserveCapacity(text.utf8.count + 2)
    writeString(text, to: &out)
    return String(decoding: out, as: UTF8.self)
  }

  /// The UTF-8 bytes of `jsonText`. Written as bytes, not appended to a `String` scalar by
  /// scalar: every token minted encodes its claims, and every log line its fields.
  public var jsonBytes: [UInt8] {
    var out: [UInt8] = []
    out.reserveCapacity(256)
    write(to: &out)
    return out
  }

  /// Appends `jsonText`'s bytes: for writers that build a larger JSON text (log lines).
  public func write(to out: inout [UInt8]) {
    switch self {
    case .null: out.append(contentsOf: "null".utf8)
    case .bool(let value): out.append(contentsOf: (value ? "true" : "false").utf8)
    case .int(let value): out.append(contentsOf: String(value).utf8)
    case .double(let value):
      // Swift's description is the shortest text that reads back to the same double, and
      // always has a `.` or an exponent ("1.0", "1e-05"), so it stays a double.
      out.append(contentsOf: (value.isFinite ? value.description : "null").utf8)
    case .string(let value): Self.writeString(value, to: &out)
    case .array(let elements):
      out.append(UInt8(ascii: "["))
      for (index, element) in elements.enumerated() {
        if index > 0 { out.append(UInt8(ascii: ",")) }
        element.write(to: &out)
      }
      out.append(UInt8(ascii: "]"))
    case .object(let members):
      out.append(UInt8(ascii: "{"))
      for (index, member) in members.sorted(by: { $0.key < $1.key }).enumerated() {
        if index > 0 { out.append(UInt8(ascii: ",")) }
        Self.writeString(member.key, to: &out)
        out.append(UInt8(ascii: ":"))
        member.value.write(to: &out)
      }
      out.append(UInt8(ascii: "}"))
    }
  }

  /// Escapes what RFC 8259 requires (quote, backslash, controls) and nothing else, so
  /// non-ASCII text stays UTF-8. A `String`'s UTF-8 is valid, so bytes at or above 0x20
  /// other than the two that need escaping are copied as they are: in runs, one append
  /// each, since the strings written most (tokens in the HTTP API's replies, a JWT's
  /// claims) are long and need no escape at all; appending them byte by byte was a
  /// quarter of what an HTTPS sign-up costs beyond a native one.
  static func writeString(_ value: String, to out: inout [UInt8]) {
    out.append(UInt8(ascii: "\""))
    var text = value
    text.withUTF8 { bytes in
      var runStart = 0
      var index = 0
      while index < bytes.count {
        // Eight bytes at a time while none of them can need an escape.
        if index + 8 <= bytes.count, let base = bytes.baseAddress,
          !mayNeedEscape(UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self))
        {
          index += 8
          continue
        }
        let byte = bytes[index]
        if byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
          out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index]))
          writeEscape(byte, to: &out)
          runStart = index + 1
        }
        index += 1
      }
      out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<bytes.count]))
    }
    out.append(UInt8(ascii: "\""))
  }

  /// Whether any of the eight bytes of `word` is below 0x20, a quote or a backslash: the
  /// classic word-at-a-time tests (a byte less than n; a zero byte after XOR), which
  /// never miss one (a false alarm only sends the bytes one at a time).
  private static func mayNeedEscape(_ word: UInt64) -> Bool {
    let ones: UInt64 = 0x0101_0101_0101_0101
    let highs: UInt64 = 0x8080_8080_8080_8080
    func hasZeroByte(_ x: UInt64) -> Bool { (x &- ones) & ~x & highs != 0 }
    let control = (word &- ones &* 0x20) & ~word & highs != 0
    return control || hasZeroByte(word ^ (ones &* 0x22)) || hasZeroByte(word ^ (ones &* 0x5C))
  }

  /// The escape of one byte that JSON does not allow in a string as it is.
  private static func writeEscape(_ byte: UInt8, to out: inout [UInt8]) {
    switch byte {
    case UInt8(ascii: "\""): out.append(contentsOf: #"\""#.utf8)
    case UInt8(ascii: "\\"): out.append(contentsOf: #"\\"#.utf8)
    case 0x0A: out.append(contentsOf: #"\n"#.utf8)
    case 0x0D: out.append(contentsOf: #"\r"#.utf8)
    case 0x09: out.append(contentsOf: #"\t"#.utf8)
    case 0x08: out.append(contentsOf: #"\b"#.utf8)
    case 0x0C: out.append(contentsOf: #"\f"#.utf8)
    default:
      out.append(contentsOf: #"\u00"#.utf8)
      out.append(hexDigit(byte >> 4))
      out.append(hexDigit(byte & 0x0F))
    }
  }

  private static func hexDigit(_ nibble: UInt8) -> UInt8 {
    nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
  }
}
