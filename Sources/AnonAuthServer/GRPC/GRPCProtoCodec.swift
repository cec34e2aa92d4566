import AnonAuthWire

/// The protobuf wire format, just enough for the standard services' few small messages
/// (health, reflection) and for reading the embedded file descriptors. Those messages
/// have no C or Swift types (they are not in Protos/), so they are read and written
/// field by field here.

/// A message's bytes could not be followed: a truncated value, a length past the end,
/// or a wire type protobuf does not accept (groups).
struct GRPCProtoMalformed: Error, Equatable {}

/// Reads one message's top-level fields in order, through AnonAuthWire's one wire walker
/// (`ProtoFieldReader`); a field number 0, which protobuf forbids, is malformed too.
struct GRPCProtoReader {
  typealias Value = ProtoFieldReader.Value

  private var fields: ProtoFieldReader

  init(_ bytes: ArraySlice<UInt8>) {
    fields = ProtoFieldReader(bytes)
  }

  init(_ bytes: [UInt8]) {
    self.init(bytes[...])
  }

  /// The next field, or nil at the end.
  mutating func next() throws(GRPCProtoMalformed) -> (number: UInt64, value: Value)? {
    guard let field = fields.next() else {
      if fields.failed { throw GRPCProtoMalformed() }
      return nil
    }
    guard field.number > 0 else { throw GRPCProtoMalformed() }
    return field
  }
}

/// Appends fields to a message's bytes, in the order the caller writes them.
struct GRPCProtoWriter {
  private(set) var bytes: [UInt8] = []

  mutating func varint(_ field: UInt64, _ value: UInt64) {
    ProtoVarint.append(field << 3, to: &bytes)
    ProtoVarint.append(value, to: &bytes)
  }

  /// An `int32`: a negative value takes ten bytes, as protobuf encodes it.
  mutating func int32(_ field: UInt64, _ value: Int32) {
    varint(field, UInt64(bitPattern: Int64(value)))
  }

  mutating func bytes(_ field: UInt64, _ value: some Collection<UInt8>) {
    ProtoVarint.append(field << 3 | 2, to: &bytes)
    ProtoVarint.append(UInt64(value.count), to: &bytes)
    bytes.append(contentsOf: value)
  }

  mutating func string(_ field: UInt64, _ value: String) {
    bytes(field, value.utf8)
  }
}
