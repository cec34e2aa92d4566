/// Why bytes could not be decoded as a message.
///
/// protobuf-c reports only success or failure, so there is one case; the caller maps it
/// to the reason its layer owns (`MALFORMED_FRAME`, `MALFORMED_REQUEST`).
public enum ProtoDecodingError: Error, Sendable, Hashable {
  /// Not a valid protobuf encoding of the expected message.
  case malformed
}
