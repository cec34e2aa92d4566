/// Reads the fields of one message body. Every read checks the bytes left first, and
/// every length comes from the body as an unsigned word that is compared with what is left
/// before it is used, so no field can make a read go past the end or backwards.
struct WireDecoder {
  private let body: [UInt8]
  private(set) var offset = 0

  init(_ body: [UInt8]) { self.body = body }

  var remaining: Int { body.count - offset }
  var isAtEnd: Bool { offset >= body.count }

  mutating func uint64(_ field: String) throws(DqliteError) -> UInt64 { try littleEndian(field) }

  mutating func uint32(_ field: String) throws(DqliteError) -> UInt32 { try littleEndian(field) }

  /// The next `Value.bitWidth / 8` bytes as a little-endian integer, consumed.
  private mutating func littleEndian<Value: FixedWidthInteger & UnsignedInteger>(
    _ field: String
  ) throws(DqliteError) -> Value {
    guard let value: Value = peek() else { throw .malformed("\(field): body ends early") }
    offset += Value.bitWidth / 8
    return value
  }

  /// The next little-endian integer without consuming it; nil when the body ends first.
  private func peek<Value: FixedWidthInteger & UnsignedInteger>() -> Value? {
    let size = Value.bitWidth / 8
    guard remaining >= size else { return nil }
    var value: Value = 0
    for index in 0..<size { value |= Value(body[offset + index]) << (8 * index) }
    return value
  }

  /// The next word without consuming it: row markers are told from row headers this way.
  func peekWord() -> UInt64? { peek() }

  mutating func bytes(_ count: Int, _ field: String) throws(DqliteError) -> ArraySlice<UInt8> {
    guard count >= 0, remaining >= count else { throw .malformed("\(field): body ends early") }
    defer { offset += count }
    return body[offset..<offset + count]
  }

  /// NUL-terminated UTF-8 padded to a word; invalid UTF-8 is malformed, not replaced.
  mutating func text(_ field: String) throws(DqliteError) -> String {
    guard let end = body[offset...].firstIndex(of: 0) else {
      throw .malformed("\(field): text has no terminator")
    }
    guard let string = String(validating: body[offset..<end], as: UTF8.self) else {
      throw .malformed("\(field): text is not UTF-8")
    }
    try skip(to: Self.padded(end + 1), field)
    return string
  }

  mutating func blob(_ field: String) throws(DqliteError) -> [UInt8] {
    let length = try uint64(field)
    guard length <= UInt64(remaining) else { throw .malformed("\(field): blob longer than the body") }
    let bytes = Array(try bytes(Int(length), field))
    try skip(to: Self.padded(offset), field)
    return bytes
  }

  /// Moves to `position` (padding), which must lie within the body.
  mutating func skip(to position: Int, _ field: String) throws(DqliteError) {
    guard position >= offset, position <= body.count else {
      throw .malformed("\(field): padding past the body")
    }
    offset = position
  }

  mutating func alignToWord(_ field: String) throws(DqliteError) {
    try skip(to: Self.padded(offset), field)
  }

  static func padded(_ count: Int) -> Int { (count + 7) & ~7 }
}
