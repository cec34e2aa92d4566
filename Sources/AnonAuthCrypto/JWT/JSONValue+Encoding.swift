extension JSONValue {
  /// Compact JSON text (no spaces, object keys sorted), deterministic for equal values so
  /// that signed tokens and stored claims are reproducible. Non-finite doubles, which JSON
  /// cannot express, become `null`.
  public var jsonText: String {
    var out = ""
    write(to: &out)
    return out
  }

  /// `text` as a JSON string literal, quotes included: shared by everything that writes
  /// JSON by hand (log lines, the daemon's output), so escaping lives in one place.
  public static func quoted(_ text: String) -> String {
    var out = ""
    writeString(text, to: &out)
    return out
  }

  /// The UTF-8 bytes of `jsonText`.
  public var jsonBytes: [UInt8] { Array(jsonText.utf8) }

  func write(to out: inout String) {
    switch self {
    case .null: out += "null"
    case .bool(let value): out += value ? "true" : "false"
    case .int(let value): out += String(value)
    case .double(let value):
      // Swift's description is the shortest text that reads back to the same double, and
      // always has a `.` or an exponent ("1.0", "1e-05"), so it stays a double.
      out += value.isFinite ? value.description : "null"
    case .string(let value): Self.writeString(value, to: &out)
    case .array(let elements):
      out += "["
      for (index, element) in elements.enumerated() {
        if index > 0 { out += "," }
        element.write(to: &out)
      }
      out += "]"
    case .object(let members):
      out += "{"
      for (index, key) in members.keys.sorted().enumerated() {
        if index > 0 { out += "," }
        Self.writeString(key, to: &out)
        out += ":"
        members[key]?.write(to: &out)
      }
      out += "}"
    }
  }

  /// Escapes what RFC 8259 requires (quote, backslash, controls) and nothing else, so
  /// non-ASCII text stays UTF-8.
  static func writeString(_ value: String, to out: inout String) {
    out += "\""
    for scalar in value.unicodeScalars {
      switch scalar {
      case "\"": out += "\\\""
      case "\\": out += "\\\\"
      case "\n": out += "\\n"
      case "\r": out += "\\r"
      case "\t": out += "\\t"
      case "\u{08}": out += "\\b"
      case "\u{0C}": out += "\\f"
      case _ where scalar.value < 0x20:
        let hex = String(scalar.value, radix: 16)
        out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
      default: out.unicodeScalars.append(scalar)
      }
    }
    out += "\""
  }
}
