/// A protocol-buffer message that travels on the AnonAuth wire.
///
/// The transport, the router and the client handle payloads generically (decode a request
/// by method, encode a reply), so every generated message type offers the same three entry
/// points. Encoding and decoding go through protobuf-c, the codec the design card fixes.
public protocol ProtoMessage: Sendable, Equatable {
  /// The fully qualified proto name, for log lines and error messages that must say which
  /// message failed without depending on Swift type names.
  static var protoMessageName: String { get }

  /// Fields that this build does not know but a newer peer sent; re-encoding writes them
  /// back, so a relay never drops what it does not understand.
  var unknownFields: [ProtoUnknownField] { get set }

  /// A message with every field at its proto3 default, as an empty encoding decodes.
  init()

  /// Decodes a message from its wire bytes.
  ///
  /// Input comes from the network, so anything that is not a valid encoding of this
  /// message is reported, never trapped on. Invalid UTF-8 in a string field is repaired
  /// with U+FFFD rather than rejected.
  /// - Throws: `ProtoDecodingError.malformed` when `bytes` is not a valid encoding.
  init(serializedBytes bytes: [UInt8]) throws(ProtoDecodingError)

  /// The wire encoding. Map entries are written in key order, so equal messages always
  /// encode to equal bytes (useful for caching, hashing and tests).
  ///
  /// Every string is sent whole. protobuf-c's `char *` cannot hold one that contains NUL,
  /// so such a string is written as an unknown field with its own field number, after the
  /// known fields: every protobuf decoder, this one included, reads it as that field.
  /// Decoding likewise keeps strings with NUL whole instead of cutting them at the NUL.
  func serializedBytes() -> [UInt8]
}
