/// One field that a message type does not know, kept exactly as it arrived.
///
/// A peer built from a newer `.proto` may send fields this build lacks. Keeping them lets
/// a decode-then-encode round trip (a proxy, a store that saves messages) lose nothing.
public struct ProtoUnknownField: Sendable, Hashable {
  /// The largest field number protobuf allows: 2^29 - 1.
  static let maxFieldNumber: UInt32 = (1 << 29) - 1

  /// The field number from the tag.
  public let fieldNumber: UInt32
  /// How `bytes` is laid out.
  public let wireType: ProtoWireType
  /// The value as it follows the tag: the varint bytes, the 4 or 8 fixed bytes, or, for a
  /// length-delimited field, the payload *without* its length prefix (the encoder adds it).
  public let bytes: [UInt8]

  /// A field to encode as unknown, for tests and for relays that add fields they cannot
  /// name. Returns nil when `bytes` is not a valid value of `wireType` or the field
  /// number is out of range, so that no value of this type can make an encoder write a
  /// corrupt message.
  public init?(fieldNumber: UInt32, wireType: ProtoWireType, bytes: [UInt8]) {
    guard (1...Self.maxFieldNumber).contains(fieldNumber) else { return nil }
    switch wireType {
    case .varint:
      guard ProtoVarint.isSingleVarint(bytes) else { return nil }
    case .fixed64:
      guard bytes.count == 8 else { return nil }
    case .fixed32:
      guard bytes.count == 4 else { return nil }
    case .lengthDelimited:
      break
    }
    self.init(trusted: fieldNumber, wireType, bytes)
  }

  /// For values that are valid by construction: what protobuf-c parsed, or a string the
  /// bridge moves here because protobuf-c's `char *` cannot hold it.
  init(trusted fieldNumber: UInt32, _ wireType: ProtoWireType, _ bytes: [UInt8]) {
    self.fieldNumber = fieldNumber
    self.wireType = wireType
    self.bytes = bytes
  }
}
