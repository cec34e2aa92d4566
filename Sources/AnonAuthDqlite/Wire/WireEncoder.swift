/// Builds one dqlite message: an 8-byte header (body length in 8-byte words, type,
/// schema, two reserved bytes) and a body of little-endian words. Every field is padded to
/// a word, so the body's length is a multiple of 8 by construction.
struct WireEncoder {
  private(set) var body: [UInt8] = []

  mutating func uint64(_ value: UInt64) {
    withUnsafeBytes(of: value.littleEndian) { body.append(contentsOf: $0) }
  }

  mutating func uint32(_ value: UInt32) {
    withUnsafeBytes(of: value.littleEndian) { body.append(contentsOf: $0) }
  }

  mutating func int64(_ value: Int64) { uint64(UInt64(bitPattern: value)) }

  /// NUL-terminated UTF-8, padded to a word. Text with a NUL inside cannot be sent as text:
  /// the node would cut it there.
  mutating func text(_ value: String) throws(DqliteError) {
    let utf8 = Array(value.utf8)
    if utf8.contains(0) { throw .invalidRequest("text holds a NUL byte") }
    body.append(contentsOf: utf8)
    body.append(0)
    pad()
  }

  mutating func blob(_ value: [UInt8]) {
    uint64(UInt64(value.count))
    body.append(contentsOf: value)
    pad()
  }

  /// A parameter tuple (schema 0): a count byte, one type byte per value, padding, then
  /// the values. No parameters is no bytes at all, which the node reads as none.
  mutating func parameters(_ values: [DqliteValue]) throws(DqliteError) {
    guard !values.isEmpty else { return }
    guard values.count <= 255 else { throw .invalidRequest("more than 255 parameters") }
    body.append(UInt8(values.count))
    for value in values { body.append(Self.typeCode(of: value).rawValue) }
    pad()
    for value in values {
      switch value {
      case .integer(let number): int64(number)
      case .real(let number): uint64(number.bitPattern)
      case .text(let string): try text(string)
      case .blob(let bytes): blob(bytes)
      case .null: uint64(0)
      }
    }
  }

  private static func typeCode(of value: DqliteValue) -> DqliteTypeCode {
    switch value {
    case .integer: .integer
    case .real: .real
    case .text: .text
    case .blob: .blob
    case .null: .null
    }
  }

  private mutating func pad() {
    let remainder = body.count % 8
    if remainder != 0 { body.append(contentsOf: repeatElement(0, count: 8 - remainder)) }
  }

  /// The whole message, header first.
  func message(type: UInt8, schema: UInt8 = 0) -> [UInt8] {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(8 + body.count)
    withUnsafeBytes(of: UInt32(body.count / 8).littleEndian) { bytes.append(contentsOf: $0) }
    bytes.append(type)
    bytes.append(schema)
    bytes.append(0)
    bytes.append(0)
    bytes.append(contentsOf: body)
    return bytes
  }
}
