/// The protobuf wire format, just enough for the standard services' few small messages
/// (health, reflection) and for reading the embedded file descriptors. Those messages
/// have no C or Swift types (they are not in Protos/), so they are read and written
/// field by field here.

/// A message's bytes could not be followed: a truncated value, a length past the end,
/// or a wire type protobuf does not accept (groups).
struct GRPCProtoMalformed: Error, Equatable {}

/// Reads one message's top-level fields in order. Every length is checked against what
/// is left before slicing, so no input traps.
struct GRPCProtoReader {
  enum Value: Equatable {
    case varint(UInt64)
    case bytes(ArraySlice<UInt8>)
    /// A fixed32 or fixed64 value: no field these messages read has one; skipped.
    case fixed
  }

  private let bytes: ArraySlice<UInt8>
  private var position: Int

  init(_ bytes: ArraySlice<UInt8>) {
    self.bytes = bytes
    self.position = bytes.startIndex
  }

  init(_ bytes: [UInt8]) {
    self.init(bytes[...])
  }

  /// The next field, or nil at the end.
  mutating func next() throws(GRPCProtoMalformed) -> (number: UInt64, value: Value)? {
    guard position < bytes.endIndex else { return nil }
    let key = try varint()
    let number = key >> 3
    guard number > 0 else { throw GRPCProtoMalformed() }
    switch key & 7 {
    case 0:
      return (number, .varint(try varint()))
    case 1:
      try skip(8)
      return (number, .fixed)
    case 5:
      try skip(4)
      return (number, .fixed)
    case 2:
      let length = try varint()
      guard length <= UInt64(bytes.endIndex - position) else { throw GRPCProtoMalformed() }
      let start = position
      position += Int(length)
      return (number, .bytes(bytes[start..<position]))
    default:
      throw GRPCProtoMalformed()
    }
  }

  private mutating func skip(_ count: Int) throws(GRPCProtoMalformed) {
    guard bytes.endIndex - position >= count else { throw GRPCProtoMalformed() }
    position += count
  }

  private mutating func varint() throws(GRPCProtoMalformed) -> UInt64 {
    var value: UInt64 = 0
    var shift: UInt64 = 0
    while position < bytes.endIndex, shift < 64 {
      let byte = bytes[position]
      position += 1
      value |= UInt64(byte & 0x7f) << shift
      if byte & 0x80 == 0 { return value }
      shift += 7
    }
    throw GRPCProtoMalformed()
  }
}

extension GRPCProtoReader.Value {
  /// A length-delimited value as UTF-8 text; nil for another wire type or invalid UTF-8
  /// (proto3 `string` fields must be valid UTF-8).
  var string: String? {
    guard case .bytes(let slice) = self else { return nil }
    return String(validating: slice, as: UTF8.self)
  }

  var slice: ArraySlice<UInt8>? {
    guard case .bytes(let slice) = self else { return nil }
    return slice
  }

  var integer: UInt64? {
    guard case .varint(let value) = self else { return nil }
    return value
  }
}

/// Appends fields to a message's bytes, in the order the caller writes them.
struct GRPCProtoWriter {
  private(set) var bytes: [UInt8] = []

  mutating func varint(_ field: UInt64, _ value: UInt64) {
    appendVarint(field << 3)
    appendVarint(value)
  }

  /// An `int32`: a negative value takes ten bytes, as protobuf encodes it.
  mutating func int32(_ field: UInt64, _ value: Int32) {
    varint(field, UInt64(bitPattern: Int64(value)))
  }

  mutating func bytes(_ field: UInt64, _ value: some Collection<UInt8>) {
    appendVarint(field << 3 | 2)
    appendVarint(UInt64(value.count))
    bytes.append(contentsOf: value)
  }

  mutating func string(_ field: UInt64, _ value: String) {
    bytes(field, value.utf8)
  }

  private mutating func appendVarint(_ value: UInt64) {
    var rest = value
    while rest >= 0x80 {
      bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
      rest >>= 7
    }
    bytes.append(UInt8(rest))
  }
}
