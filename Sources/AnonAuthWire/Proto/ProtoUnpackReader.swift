internal import CProtobufC

/// Copies the fields of an unpacked protobuf-c tree into Swift values.
///
/// It never trusts the shape of the tree beyond what protobuf-c promises: a null pointer
/// where an element should be is reported as malformed input instead of being unwrapped.
struct ProtoUnpackReader {
  let allocations: ProtoUnpackAllocations

  /// A string field, with its full length (see `ProtoUnpackAllocations`). Invalid UTF-8
  /// is repaired with U+FFFD: protobuf-c does not validate it and a Swift `String` must
  /// be valid.
  func string(_ pointer: UnsafePointer<CChar>?) -> String {
    guard let pointer else { return "" }
    guard let size = allocations.size(of: pointer), size > 0 else {
      return String(cString: pointer)
    }
    return String(decoding: UnsafeRawBufferPointer(start: pointer, count: size - 1), as: UTF8.self)
  }

  func bytes(_ data: ProtobufCBinaryData) -> [UInt8] {
    guard let pointer = data.data, data.len > 0 else { return [] }
    return Array(UnsafeBufferPointer(start: pointer, count: data.len))
  }

  /// A repeated field of any element type, transformed element by element.
  func array<Element, Value>(
    _ pointer: UnsafePointer<Element>?, count: Int,
    _ transform: (Element) throws(ProtoDecodingError) -> Value
  ) throws(ProtoDecodingError) -> [Value] {
    guard count > 0 else { return [] }
    guard let pointer, count >= 0 else { throw .malformed }
    var values: [Value] = []
    values.reserveCapacity(count)
    for element in UnsafeBufferPointer(start: pointer, count: count) {
      values.append(try transform(element))
    }
    return values
  }

  func strings(_ pointer: UnsafePointer<UnsafeMutablePointer<CChar>?>?, count: Int)
    throws(ProtoDecodingError) -> [String]
  {
    try array(pointer, count: count) { (element) throws(ProtoDecodingError) in
      guard let element else { throw .malformed }
      return string(element)
    }
  }

  /// A singular message field: nil when absent, which is how proto3 signals presence.
  func message<M: ProtoCBridged>(_ pointer: UnsafePointer<M.CMessage>?, as _: M.Type)
    throws(ProtoDecodingError) -> M?
  {
    guard let pointer else { return nil }
    return try M(cMessage: pointer, reader: self)
  }

  /// A message that must be there: the selected member of a oneof.
  func requiredMessage<M: ProtoCBridged>(_ pointer: UnsafePointer<M.CMessage>?, as _: M.Type)
    throws(ProtoDecodingError) -> M
  {
    guard let pointer else { throw .malformed }
    return try M(cMessage: pointer, reader: self)
  }

  func messages<M: ProtoCBridged>(
    _ pointer: UnsafePointer<UnsafeMutablePointer<M.CMessage>?>?, count: Int, as _: M.Type
  ) throws(ProtoDecodingError) -> [M] {
    try array(pointer, count: count) { (element) throws(ProtoDecodingError) in
      try requiredMessage(element, as: M.self)
    }
  }

  /// A map field. A key that appears twice keeps its last value, as protobuf specifies.
  func map<Entry, Key: Hashable, Value>(
    _ pointer: UnsafePointer<UnsafeMutablePointer<Entry>?>?, count: Int,
    _ read: (Entry, ProtoUnpackReader) throws(ProtoDecodingError) -> (Key, Value)
  ) throws(ProtoDecodingError) -> [Key: Value] {
    let pairs = try array(pointer, count: count) { (element) throws(ProtoDecodingError) in
      guard let element else { throw .malformed }
      return try read(element.pointee, self)
    }
    return Dictionary(pairs) { _, last in last }
  }

  func unknownFields(of base: ProtobufCMessage) throws(ProtoDecodingError)
    -> [ProtoUnknownField]
  {
    try array(base.unknown_fields, count: Int(base.n_unknown_fields)) {
      (field) throws(ProtoDecodingError) in
      let rawWireType = UInt8(truncatingIfNeeded: field.wire_type.rawValue)
      guard let wireType = ProtoWireType(rawValue: rawWireType) else { throw .malformed }
      let data = UnsafeRawBufferPointer(start: field.data, count: field.data == nil ? 0 : field.len)
      guard wireType == .lengthDelimited else {
        return ProtoUnknownField(trusted: field.tag, wireType, Array(data))
      }
      // protobuf-c keeps the length prefix in the data; the Swift value does not.
      guard let prefix = ProtoVarint.read(data, at: 0), prefix.value == UInt64(data.count - prefix.end)
      else { throw .malformed }
      return ProtoUnknownField(trusted: field.tag, wireType, Array(data[prefix.end...]))
    }
  }
}
