/// Walks the top-level fields of one message's wire bytes without allocating: the one
/// wire reader of the pre-scan (`ProtoPreScan`).
///
/// Every length is a bounds-checked `UInt64` compared with what is left before any
/// slicing, so no input makes it trap. It is never stricter than protobuf-c about what it
/// can follow: where it stops, protobuf-c rejects the message too. It reads through a raw
/// buffer, valid only inside the caller's `withUnsafeBytes`.
struct ProtoWireReader {
  private let bytes: UnsafeRawBufferPointer
  private var position = 0

  init(bytes: UnsafeRawBufferPointer) {
    self.bytes = bytes
  }

  struct Field {
    let number: UInt64
    /// The bytes of a length-delimited field; nil for other wire types.
    let payload: UnsafeRawBufferPointer?
  }

  /// True once every byte has been read.
  var isAtEnd: Bool { position >= bytes.count }

  /// The next field, or nil at the end or at the first byte it cannot follow (a
  /// truncated value, a group marker or an invalid wire type: protobuf-c rejects those).
  mutating func nextField() -> Field? {
    guard let key = readVarint() else { return nil }
    let number = key >> 3
    switch key & 7 {
    case 0:
      guard readVarint() != nil else { return nil }
      return Field(number: number, payload: nil)
    case 1:
      return skip(8) ? Field(number: number, payload: nil) : nil
    case 5:
      return skip(4) ? Field(number: number, payload: nil) : nil
    case 2:
      guard let length = readVarint(), length <= UInt64(bytes.count - position) else { return nil }
      let start = position
      position += Int(length)
      return Field(number: number, payload: UnsafeRawBufferPointer(rebasing: bytes[start..<position]))
    default:
      return nil
    }
  }

  private mutating func skip(_ count: Int) -> Bool {
    guard bytes.count - position >= count else { return false }
    position += count
    return true
  }

  private mutating func readVarint() -> UInt64? {
    var value: UInt64 = 0
    var shift: UInt64 = 0
    var index = position
    while index < bytes.count, shift < 64 {
      let byte = bytes[index]
      value |= UInt64(byte & 0x7f) << shift
      index += 1
      if byte & 0x80 == 0 {
        position = index
        return value
      }
      shift += 7
    }
    return nil
  }
}
