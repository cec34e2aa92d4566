/// How a field's value is laid out on the wire: the low three bits of its tag.
///
/// Only the four wire types that protobuf-c accepts exist here; the deprecated group
/// markers (3 and 4) make protobuf-c reject the whole message.
public enum ProtoWireType: UInt8, Sendable, Hashable, CaseIterable {
  /// A base-128 varint: the integers, `bool` and enums.
  case varint = 0
  /// Eight little-endian bytes: `fixed64`, `sfixed64`, `double`.
  case fixed64 = 1
  /// A varint length, then that many bytes: strings, bytes, messages, packed arrays.
  case lengthDelimited = 2
  /// Four little-endian bytes: `fixed32`, `sfixed32`, `float`.
  case fixed32 = 5
}
