/// One field as it follows its key on the wire: what `ProtoWireWalker` hands back.
enum ProtoWireValue: Equatable {
  case varint(UInt64)
  /// A length-delimited field: the range of its payload in the walked bytes.
  case lengthDelimited(Range<Int>)
  /// A fixed32 or fixed64 value: skipped.
  case fixed
}

/// Walks the top-level fields of one message's wire bytes without allocating: the one
/// field walker of the code base, under the pre-scan (`ProtoWireReader`) and the
/// hand-written readers of messages that have no generated type (`ProtoFieldReader`).
///
/// Every length is a bounds-checked `UInt64` compared with what is left before any
/// slicing, so no input makes it trap. It is never stricter than protobuf-c about what it
/// can follow: where it stops, protobuf-c rejects the message too.
struct ProtoWireWalker<Bytes: RandomAccessCollection<UInt8>> where Bytes.Index == Int {
  private let bytes: Bytes
  private var position: Int

  init(_ bytes: Bytes) {
    self.bytes = bytes
    position = bytes.startIndex
  }

  /// True once every byte has been read.
  var isAtEnd: Bool { position >= bytes.endIndex }

  /// The next field, or nil at the end or at the first byte it cannot follow (a
  /// truncated value, a group marker or an invalid wire type: protobuf-c rejects those).
  mutating func next() -> (number: UInt64, value: ProtoWireValue)? {
    guard let key = varint() else { return nil }
    let number = key >> 3
    switch key & 7 {
    case 0:
      guard let value = varint() else { return nil }
      return (number, .varint(value))
    case 1:
      return skip(8) ? (number, .fixed) : nil
    case 5:
      return skip(4) ? (number, .fixed) : nil
    case 2:
      guard let length = varint(), length <= UInt64(bytes.endIndex - position) else { return nil }
      let start = position
      position += Int(length)
      return (number, .lengthDelimited(start..<position))
    default:
      return nil
    }
  }

  private mutating func skip(_ count: Int) -> Bool {
    guard bytes.endIndex - position >= count else { return false }
    position += count
    return true
  }

  private mutating func varint() -> UInt64? {
    guard let (value, end) = ProtoVarint.read(bytes, at: position) else { return nil }
    position = end
    return value
  }
}

/// The pre-scan's view of the walker (`ProtoPreScan`): fields with their payloads as raw
/// buffers, valid only inside the caller's `withUnsafeBytes`.
struct ProtoWireReader {
  private var walker: ProtoWireWalker<UnsafeRawBufferPointer>
  private let bytes: UnsafeRawBufferPointer

  init(bytes: UnsafeRawBufferPointer) {
    self.bytes = bytes
    walker = ProtoWireWalker(bytes)
  }

  struct Field {
    let number: UInt64
    /// The bytes of a length-delimited field; nil for other wire types.
    let payload: UnsafeRawBufferPointer?
  }

  /// True once every byte has been read.
  var isAtEnd: Bool { walker.isAtEnd }

  /// The next field, or nil at the end or at the first byte it cannot follow.
  mutating func nextField() -> Field? {
    guard let (number, value) = walker.next() else { return nil }
    guard case .lengthDelimited(let range) = value else { return Field(number: number, payload: nil) }
    return Field(number: number, payload: UnsafeRawBufferPointer(rebasing: bytes[range]))
  }
}

/// Reads a message that has no generated type field by field (the gRPC standard
/// services' requests, the embedded file descriptors, the `grpc-status-details-bin`
/// trailer a client reads), through the same walker as the pre-scan.
public struct ProtoFieldReader {
  /// A field's value.
  public enum Value: Equatable, Sendable {
    case varint(UInt64)
    case bytes(ArraySlice<UInt8>)
    /// A fixed32 or fixed64 value: no message read this way has one; skipped.
    case fixed
  }

  private let bytes: ArraySlice<UInt8>
  private var walker: ProtoWireWalker<ArraySlice<UInt8>>
  /// Set at the first byte it cannot follow; `next` then returns nil.
  public private(set) var failed = false

  public init(_ bytes: ArraySlice<UInt8>) {
    self.bytes = bytes
    walker = ProtoWireWalker(bytes)
  }

  public init(_ bytes: [UInt8]) {
    self.init(bytes[...])
  }

  /// The next field; nil at the end, or once it failed (`failed`).
  public mutating func next() -> (number: UInt64, value: Value)? {
    guard !failed, !walker.isAtEnd else { return nil }
    guard let (number, value) = walker.next() else {
      failed = true
      return nil
    }
    switch value {
    case .varint(let value): return (number, .varint(value))
    case .fixed: return (number, .fixed)
    case .lengthDelimited(let range): return (number, .bytes(bytes[range]))
    }
  }
}

extension ProtoFieldReader.Value {
  /// A length-delimited value as UTF-8 text; nil for another wire type or invalid UTF-8
  /// (proto3 `string` fields must be valid UTF-8).
  public var string: String? {
    guard case .bytes(let slice) = self else { return nil }
    return String(validating: slice, as: UTF8.self)
  }

  /// A length-delimited value's bytes; nil for another wire type.
  public var slice: ArraySlice<UInt8>? {
    guard case .bytes(let slice) = self else { return nil }
    return slice
  }

  /// A varint's value; nil for another wire type.
  public var integer: UInt64? {
    guard case .varint(let value) = self else { return nil }
    return value
  }
}
