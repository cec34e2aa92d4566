internal import CProtobufC

/// Owns every C allocation made while a protobuf-c struct tree is filled for packing.
///
/// protobuf-c packs from a tree that the caller owns and never frees it. One owner that
/// frees everything at once keeps the bridge leak-free without bookkeeping per field, and
/// the tree lives exactly as long as `with`'s closure.
final class ProtoArena {
  private var blocks: [UnsafeMutableRawPointer] = []

  private init() {}

  deinit {
    for block in blocks { block.deallocate() }
  }

  /// Runs `body` with a fresh arena and frees all of it afterwards.
  static func with<R>(_ body: (ProtoArena) -> R) -> R {
    let arena = ProtoArena()
    return withExtendedLifetime(arena) { body(arena) }
  }

  /// Uninitialized memory for `count` values (at least one, so the pointer is never
  /// dangling), freed with the arena. Only for trivial C types.
  func allocate<T>(_: T.Type, count: Int = 1) -> UnsafeMutablePointer<T> {
    let capacity = max(count, 1)
    let raw = UnsafeMutableRawPointer.allocate(
      byteCount: MemoryLayout<T>.stride * capacity, alignment: MemoryLayout<T>.alignment)
    blocks.append(raw)
    return raw.bindMemory(to: T.self, capacity: capacity)
  }

  // MARK: Messages

  /// A filled C struct for `message`.
  func message<M: ProtoCBridged>(_ message: M) -> UnsafeMutablePointer<M.CMessage> {
    let cMessage = allocate(M.CMessage.self)
    M.cInit(cMessage)
    message.fill(cMessage, arena: self)
    return cMessage
  }

  /// A repeated message field: protobuf-c wants an array of pointers.
  func messages<M: ProtoCBridged>(_ messages: [M]) -> (
    count: Int, pointer: UnsafeMutablePointer<UnsafeMutablePointer<M.CMessage>?>?
  ) {
    guard !messages.isEmpty else { return (0, nil) }
    let array = allocate(UnsafeMutablePointer<M.CMessage>?.self, count: messages.count)
    for (index, element) in messages.enumerated() {
      (array + index).initialize(to: message(element))
    }
    return (messages.count, array)
  }

  /// A map field: protobuf-c wants an array of pointers to entry messages. Entries go in
  /// key order so that equal dictionaries encode to equal bytes.
  func map<Key: ProtoMapKey, Value, Entry>(
    _ dictionary: [Key: Value],
    fill: (UnsafeMutablePointer<Entry>, Key, Value, ProtoArena) -> Void
  ) -> (count: Int, pointer: UnsafeMutablePointer<UnsafeMutablePointer<Entry>?>?) {
    guard !dictionary.isEmpty else { return (0, nil) }
    let sorted = dictionary.sorted { $0.key.protoSortsBefore($1.key) }
    let array = allocate(UnsafeMutablePointer<Entry>?.self, count: sorted.count)
    for (index, element) in sorted.enumerated() {
      let entry = allocate(Entry.self)
      fill(entry, element.key, element.value, self)
      (array + index).initialize(to: entry)
    }
    return (sorted.count, array)
  }

  // MARK: Strings

  /// A NUL-terminated copy, or nil when `string` contains NUL: protobuf-c measures
  /// strings with `strlen`, so it would silently cut such a string short.
  func cString(_ string: String) -> UnsafeMutablePointer<CChar>? {
    var string = string
    return string.withUTF8 { (utf8) -> UnsafeMutablePointer<CChar>? in
      guard !utf8.contains(0) else { return nil }
      let copy = allocate(CChar.self, count: utf8.count + 1)
      if let source = utf8.baseAddress {
        UnsafeMutableRawPointer(copy).copyMemory(from: source, byteCount: utf8.count)
      }
      copy[utf8.count] = 0
      return copy
    }
  }

  /// A string field. Every Swift string is sent whole: one that contains NUL, which
  /// protobuf-c's `char *` cannot carry, goes to `spill` as an unknown field with the same
  /// number, which protobuf-c writes verbatim (after the known fields), so the peer
  /// decodes the full value.
  func string(_ string: String, number: UInt32, spill: inout [ProtoUnknownField])
    -> UnsafeMutablePointer<CChar>
  {
    if let copy = cString(string) { return copy }
    spill.append(ProtoUnknownField(trusted: number, .lengthDelimited, Array(string.utf8)))
    let empty = allocate(CChar.self)
    empty.initialize(to: 0)
    return empty
  }

  /// A repeated string field. If any element contains NUL, all of them are spilled, so
  /// their order on the wire stays the order of the array.
  func strings(_ strings: [String], number: UInt32, spill: inout [ProtoUnknownField]) -> (
    count: Int, pointer: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
  ) {
    guard !strings.isEmpty else { return (0, nil) }
    let array = allocate(UnsafeMutablePointer<CChar>?.self, count: strings.count)
    for (index, element) in strings.enumerated() {
      guard let copy = cString(element) else {
        for spilled in strings {
          spill.append(ProtoUnknownField(trusted: number, .lengthDelimited, Array(spilled.utf8)))
        }
        return (0, nil)
      }
      (array + index).initialize(to: copy)
    }
    return (strings.count, array)
  }

  // MARK: Bytes and scalars

  func bytes(_ bytes: [UInt8]) -> ProtobufCBinaryData {
    guard !bytes.isEmpty else { return ProtobufCBinaryData(len: 0, data: nil) }
    let copy = allocate(UInt8.self, count: bytes.count)
    bytes.withUnsafeBufferPointer { source in
      if let base = source.baseAddress { copy.initialize(from: base, count: source.count) }
    }
    return ProtobufCBinaryData(len: bytes.count, data: copy)
  }

  func bytesArray(_ values: [[UInt8]]) -> (
    count: Int, pointer: UnsafeMutablePointer<ProtobufCBinaryData>?
  ) {
    array(values.map { bytes($0) })
  }

  /// A repeated scalar field (integers, floats, `protobuf_c_boolean`, C enums).
  func array<T>(_ values: [T]) -> (count: Int, pointer: UnsafeMutablePointer<T>?) {
    guard !values.isEmpty else { return (0, nil) }
    let copy = allocate(T.self, count: values.count)
    for (index, element) in values.enumerated() {
      (copy + index).initialize(to: element)
    }
    return (values.count, copy)
  }

  // MARK: Unknown fields

  /// Hands protobuf-c the unknown fields to write after the known ones. protobuf-c keeps
  /// the length prefix of a length-delimited field inside the data, so it is added here.
  func setUnknownFields(_ fields: [ProtoUnknownField], on base: inout ProtobufCMessage) {
    guard !fields.isEmpty else { return }
    let array = allocate(ProtobufCMessageUnknownField.self, count: fields.count)
    for (index, field) in fields.enumerated() {
      var data: [UInt8] = []
      if field.wireType == .lengthDelimited {
        ProtoVarint.append(UInt64(field.bytes.count), to: &data)
      }
      data += field.bytes
      let copy = bytes(data)
      (array + index).initialize(
        to: ProtobufCMessageUnknownField(
          tag: field.fieldNumber,
          wire_type: ProtobufCWireType(rawValue: UInt32(field.wireType.rawValue)),
          len: copy.len,
          data: copy.data))
    }
    // `unsigned` in protobuf-c; four billion fields would not fit in memory first.
    base.n_unknown_fields = UInt32(clamping: fields.count)
    base.unknown_fields = array
  }
}

/// Map keys in a fixed order, so that map fields encode deterministically.
protocol ProtoMapKey: Hashable {
  func protoSortsBefore(_ other: Self) -> Bool
}

extension String: ProtoMapKey {
  /// By UTF-8 bytes, as other protobuf runtimes order string keys when asked to be
  /// deterministic; Swift's own `<` compares canonical equivalents instead.
  func protoSortsBefore(_ other: String) -> Bool {
    utf8.lexicographicallyPrecedes(other.utf8)
  }
}

extension Bool: ProtoMapKey {
  func protoSortsBefore(_ other: Bool) -> Bool { !self && other }
}

extension Int32: ProtoMapKey {
  func protoSortsBefore(_ other: Int32) -> Bool { self < other }
}

extension Int64: ProtoMapKey {
  func protoSortsBefore(_ other: Int64) -> Bool { self < other }
}

extension UInt32: ProtoMapKey {
  func protoSortsBefore(_ other: UInt32) -> Bool { self < other }
}

extension UInt64: ProtoMapKey {
  func protoSortsBefore(_ other: UInt64) -> Bool { self < other }
}
