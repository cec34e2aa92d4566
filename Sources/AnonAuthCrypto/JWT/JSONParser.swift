/// A strict RFC 8259 parser from UTF-8 bytes straight to `JSONValue`.
///
/// Every VerifyIdToken call parses a token's header and claims. Going through Foundation's
/// `JSONSerialization` built an `NSDictionary` of `NSNumber`s and bridged it back, which
/// was a third of the daemon's CPU for that call; this parser allocates only the values.
///
/// What it accepts is what `JSONSerialization` accepted with default options, except
/// trailing commas (`[1,]`), which RFC 8259 does not allow and Foundation let through: an
/// object or an array at the top (after an optional UTF-8 byte order mark), the four
/// whitespace characters, no trailing content, valid UTF-8 only, no raw control
/// characters in strings, surrogate escapes only in pairs, numbers that fit a finite
/// double, and a later duplicate key replacing an earlier one. Integers without a fraction
/// or exponent that fit `Int64` stay integers. Nesting deeper than `maximumDepth` is
/// refused, so hostile input cannot exhaust the stack. Custom claims, which kept
/// Foundation's acceptance, are read with `init(lenientJSONBytes:)`.
struct JSONParser: ~Copyable {
  static let maximumDepth = 512

  private let bytes: UnsafeBufferPointer<UInt8>
  private var index = 0
  private var depth = 0

  private init(_ bytes: UnsafeBufferPointer<UInt8>) {
    self.bytes = bytes
  }

  /// The document's value, or nil when `bytes` is not one JSON object or array.
  static func parse(_ bytes: [UInt8]) -> JSONValue? {
    bytes.withUnsafeBufferPointer { buffer in
      var parser = JSONParser(buffer)
      return parser.document()
    }
  }

  private mutating func document() -> JSONValue? {
    if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { index = 3 }
    skipWhitespace()
    guard let first = peek(), first == UInt8(ascii: "{") || first == UInt8(ascii: "[") else { return nil }
    guard let value = value() else { return nil }
    skipWhitespace()
    // Not a ternary: `nil` there would become `JSONValue.null` (the type is
    // ExpressibleByNilLiteral), accepting trailing garbage.
    guard index == bytes.count else { return nil }
    return value
  }

  private func peek() -> UInt8? {
    index < bytes.count ? bytes[index] : nil
  }

  private mutating func skipWhitespace() {
    while index < bytes.count {
      switch bytes[index] {
      case 0x20, 0x09, 0x0A, 0x0D: index += 1
      default: return
      }
    }
  }

  private mutating func value() -> JSONValue? {
    guard let byte = peek() else { return nil }
    switch byte {
    case UInt8(ascii: "{"): return object()
    case UInt8(ascii: "["): return array()
    case UInt8(ascii: "\""): return string().map(JSONValue.string)
    case UInt8(ascii: "t"): return literal("true", .bool(true))
    case UInt8(ascii: "f"): return literal("false", .bool(false))
    case UInt8(ascii: "n"): return literal("null", .null)
    case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return number()
    default: return nil
    }
  }

  private mutating func literal(_ text: StaticString, _ value: JSONValue) -> JSONValue? {
    let count = text.utf8CodeUnitCount
    guard bytes.count - index >= count else { return nil }
    let expected = UnsafeBufferPointer(start: text.utf8Start, count: count)
    for offset in 0..<count where bytes[index + offset] != expected[offset] { return nil }
    index += count
    return value
  }

  private mutating func enter() -> Bool {
    depth += 1
    index += 1
    return depth <= Self.maximumDepth
  }

  private mutating func array() -> JSONValue? {
    guard enter() else { return nil }
    defer { depth -= 1 }
    var elements: [JSONValue] = []
    let complete = items(closedBy: UInt8(ascii: "]")) { parser in
      guard let element = parser.value() else { return false }
      elements.append(element)
      return true
    }
    return complete ? .array(elements) : nil
  }

  private mutating func object() -> JSONValue? {
    guard enter() else { return nil }
    defer { depth -= 1 }
    var members: [String: JSONValue] = [:]
    let complete = items(closedBy: UInt8(ascii: "}")) { parser in
      guard parser.peek() == UInt8(ascii: "\""), let key = parser.string() else { return false }
      parser.skipWhitespace()
      guard parser.peek() == UInt8(ascii: ":") else { return false }
      parser.index += 1
      parser.skipWhitespace()
      guard let member = parser.value() else { return false }
      members[key] = member
      return true
    }
    return complete ? .object(members) : nil
  }

  /// The comma-separated items of an array or an object, from after its opening bracket
  /// to `close`, each read by `item` after white space; false when anything else stands
  /// between them.
  private mutating func items(closedBy close: UInt8, _ item: (inout JSONParser) -> Bool) -> Bool {
    skipWhitespace()
    if peek() == close {
      index += 1
      return true
    }
    while true {
      skipWhitespace()
      guard item(&self) else { return false }
      skipWhitespace()
      switch peek() {
      case UInt8(ascii: ","): index += 1
      case close:
        index += 1
        return true
      default: return false
      }
    }
  }

  /// A string literal starting at the opening quote. Text without escapes is validated and
  /// copied once; escapes go through a byte buffer that is validated as a whole (escapes
  /// only ever add complete UTF-8 sequences, so a broken raw sequence stays broken).
  private mutating func string() -> String? {
    index += 1
    let start = index
    while index < bytes.count {
      let byte = bytes[index]
      if byte == UInt8(ascii: "\"") {
        let text = String(validating: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        index += 1
        return text
      }
      if byte == UInt8(ascii: "\\") { break }
      if byte < 0x20 { return nil }
      index += 1
    }
    guard index < bytes.count else { return nil }
    var buffer = Array(bytes[start..<index])
    while index < bytes.count {
      let byte = bytes[index]
      switch byte {
      case UInt8(ascii: "\""):
        index += 1
        return String(validating: buffer, as: UTF8.self)
      case UInt8(ascii: "\\"):
        index += 1
        guard escape(into: &buffer) else { return nil }
      case 0..<0x20:
        return nil
      default:
        buffer.append(byte)
        index += 1
      }
    }
    return nil
  }

  /// One escape after its backslash, appended to `buffer` as UTF-8.
  private mutating func escape(into buffer: inout [UInt8]) -> Bool {
    guard let byte = peek() else { return false }
    index += 1
    switch byte {
    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): buffer.append(byte)
    case UInt8(ascii: "b"): buffer.append(0x08)
    case UInt8(ascii: "f"): buffer.append(0x0C)
    case UInt8(ascii: "n"): buffer.append(0x0A)
    case UInt8(ascii: "r"): buffer.append(0x0D)
    case UInt8(ascii: "t"): buffer.append(0x09)
    case UInt8(ascii: "u"):
      guard let unit = hex4() else { return false }
      var scalarValue = UInt32(unit)
      switch unit {
      case 0xD800...0xDBFF:
        guard bytes.count - index >= 6, bytes[index] == UInt8(ascii: "\\"),
          bytes[index + 1] == UInt8(ascii: "u")
        else { return false }
        index += 2
        guard let low = hex4(), (0xDC00...0xDFFF).contains(low) else { return false }
        scalarValue = 0x10000 + (UInt32(unit - 0xD800) << 10) + UInt32(low - 0xDC00)
      case 0xDC00...0xDFFF:
        return false
      default:
        break
      }
      guard let scalar = Unicode.Scalar(scalarValue) else { return false }
      UTF8.encode(scalar) { buffer.append($0) }
    default:
      return false
    }
    return true
  }

  private mutating func hex4() -> UInt16? {
    guard bytes.count - index >= 4 else { return nil }
    var unit: UInt16 = 0
    for _ in 0..<4 {
      let byte = bytes[index]
      let digit: UInt8
      switch byte {
      case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
      case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
      case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
      default: return nil
      }
      unit = unit << 4 | UInt16(digit)
      index += 1
    }
    return unit
  }

  /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`. Integers that fit stay
  /// `Int64` (accumulated without overflow); the rest go through the standard library's
  /// correctly rounded conversion and must be finite.
  private mutating func number() -> JSONValue? {
    let start = index
    let negative = bytes[index] == UInt8(ascii: "-")
    if negative { index += 1 }
    guard let first = peek(), isDigit(first) else { return nil }
    var magnitude: UInt64 = 0
    var fits = true
    if first == UInt8(ascii: "0") {
      index += 1
    } else {
      while let byte = peek(), isDigit(byte) {
        let (times10, overflow1) = magnitude.multipliedReportingOverflow(by: 10)
        let (sum, overflow2) = times10.addingReportingOverflow(UInt64(byte - UInt8(ascii: "0")))
        if overflow1 || overflow2 { fits = false }
        magnitude = sum
        index += 1
      }
    }
    var integral = true
    if peek() == UInt8(ascii: ".") {
      integral = false
      index += 1
      guard digits() else { return nil }
    }
    if let byte = peek(), byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") {
      integral = false
      index += 1
      if let sign = peek(), sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") { index += 1 }
      guard digits() else { return nil }
    }
    if integral && fits {
      if !negative && magnitude <= UInt64(Int64.max) { return .int(Int64(magnitude)) }
      if negative && magnitude <= UInt64(Int64.max) + 1 {
        return .int(Int64(truncatingIfNeeded: 0 &- magnitude))
      }
    }
    let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
    guard let double = Double(text), double.isFinite else { return nil }
    return .double(double)
  }

  /// One or more digits.
  private mutating func digits() -> Bool {
    let start = index
    while let byte = peek(), isDigit(byte) { index += 1 }
    return index > start
  }

  private func isDigit(_ byte: UInt8) -> Bool {
    byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
  }
}
