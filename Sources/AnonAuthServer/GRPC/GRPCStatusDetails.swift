import AnonAuthWire
import Foundation

/// The `grpc-status-details-bin` trailer: a `google.rpc.Status` whose one detail is a
/// `google.rpc.ErrorInfo` carrying the native status's `reason` and `details`, so a gRPC
/// client loses nothing the native transport tells (docs/grpc.md, "Errors"). The
/// messages are a handful of fields, written here by hand rather than generated: the
/// server never reads them.
///
/// google.rpc.Status: `int32 code = 1; string message = 2; repeated Any details = 3`.
/// google.protobuf.Any: `string type_url = 1; bytes value = 2`.
/// google.rpc.ErrorInfo: `string reason = 1; string domain = 2;
/// map<string, string> metadata = 3` (each entry a message: `key = 1; value = 2`).
enum GRPCStatusDetails {
  /// `ErrorInfo.domain`: the namespace of AnonAuth's reasons (docs/reasons.md), the
  /// same for every error, as Google's APIs name their own ("googleapis.com").
  static let domain = "anonauth"
  static let errorInfoTypeURL = "type.googleapis.com/google.rpc.ErrorInfo"

  /// The serialized `google.rpc.Status` for `error`. Metadata entries go out sorted by
  /// key, so the bytes are the same for the same error.
  static func status(for error: RPCError) -> [UInt8] {
    var info: [UInt8] = []
    appendString(1, error.reason, to: &info)
    appendString(2, domain, to: &info)
    for key in error.details.keys.sorted() {
      var entry: [UInt8] = []
      appendString(1, key, to: &entry)
      appendString(2, error.details[key] ?? "", to: &entry)
      appendBytes(3, entry, to: &info)
    }
    var any: [UInt8] = []
    appendString(1, errorInfoTypeURL, to: &any)
    appendBytes(2, info, to: &any)
    var status: [UInt8] = []
    if error.code.rawValue != 0 {
      appendTag(1, wireType: 0, to: &status)
      // An int32 is sign-extended to 64 bits on the wire.
      ProtoVarint.append(UInt64(bitPattern: Int64(error.code.rawValue)), to: &status)
    }
    appendString(2, error.message, to: &status)
    appendBytes(3, any, to: &status)
    return status
  }

  /// The trailer's value: base64 without padding, as gRPC's `-bin` headers are sent
  /// (clients accept it padded or not).
  static func headerValue(for error: RPCError) -> String {
    var text = Data(status(for: error)).base64EncodedString()
    while text.hasSuffix("=") { text.removeLast() }
    return text
  }

  private static func appendString(_ field: UInt64, _ value: String, to bytes: inout [UInt8]) {
    guard !value.isEmpty else { return }  // proto3: the default is not written
    appendBytes(field, Array(value.utf8), to: &bytes)
  }

  private static func appendBytes(_ field: UInt64, _ value: [UInt8], to bytes: inout [UInt8]) {
    appendTag(field, wireType: 2, to: &bytes)
    ProtoVarint.append(UInt64(value.count), to: &bytes)
    bytes.append(contentsOf: value)
  }

  private static func appendTag(_ field: UInt64, wireType: UInt64, to bytes: inout [UInt8]) {
    ProtoVarint.append(field << 3 | wireType, to: &bytes)
  }
}
