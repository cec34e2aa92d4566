/// Base-128 varints, for the length prefix that protobuf-c keeps inside an unknown
/// length-delimited field (and that `ProtoUnknownField` keeps out).
enum ProtoVarint {
  /// The longest varint: ten bytes carry 64 bits.
  static let maxLength = 10

  /// Whether `bytes` is exactly one varint: continuation bits on all bytes but the last.
  static func isSingleVarint(_ bytes: [UInt8]) -> Bool {
    guard let last = bytes.last, bytes.count <= maxLength, last & 0x80 == 0 else {
      return false
    }
    return bytes.dropLast().allSatisfy { $0 & 0x80 != 0 }
  }

  /// Appends `value` as a varint.
  static func append(_ value: UInt64, to bytes: inout [UInt8]) {
    var rest = value
    while rest >= 0x80 {
      bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
      rest >>= 7
    }
    bytes.append(UInt8(rest))
  }

  /// Reads a varint at the start of `bytes`: its value and how many bytes it took, or nil
  /// when `bytes` does not start with a complete varint that fits in 64 bits.
  static func read(_ bytes: UnsafeRawBufferPointer) -> (value: UInt64, length: Int)? {
    var value: UInt64 = 0
    for (index, byte) in bytes.prefix(maxLength).enumerated() {
      let bits = UInt64(byte & 0x7f)
      let shift = UInt64(7 * index)
      guard index < maxLength - 1 || bits <= 1 else { return nil }
      value |= bits << shift
      if byte & 0x80 == 0 { return (value, index + 1) }
    }
    return nil
  }
}
