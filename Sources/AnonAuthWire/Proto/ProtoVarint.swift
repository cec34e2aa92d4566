/// Base-128 varints: the one reader and the one writer of them in the code base. The
/// wire walker (`ProtoWireReader`, and through it the pre-scan and `ProtoFieldReader`)
/// and the length prefix that protobuf-c keeps inside an unknown length-delimited field
/// (and that `ProtoUnknownField` keeps out) all read them here.
public enum ProtoVarint {
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
  public static func append(_ value: UInt64, to bytes: inout [UInt8]) {
    var rest = value
    while rest >= 0x80 {
      bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
      rest >>= 7
    }
    bytes.append(UInt8(rest))
  }

  /// Reads the varint that starts at `start`: its value and the index after it, or nil
  /// when the bytes end first or it runs past ten bytes. Bits past the 64th are dropped,
  /// as protobuf-c does, so that no reader here is stricter than the decoder.
  @inlinable
  public static func read<Bytes: RandomAccessCollection<UInt8>>(_ bytes: Bytes, at start: Int) -> (
    value: UInt64, end: Int
  )? where Bytes.Index == Int {
    var value: UInt64 = 0
    var shift: UInt64 = 0
    var index = start
    while index < bytes.endIndex, shift < 64 {
      let byte = bytes[index]
      value |= UInt64(byte & 0x7f) << shift
      index += 1
      if byte & 0x80 == 0 { return (value, index) }
      shift += 7
    }
    return nil
  }
}
