import AnonAuthService
import AnonAuthWire

/// What one REST request reports for its log line and metrics: the REST name for the
/// line, the native method it called last for the metrics (nil when it made none: an
/// unknown path, a body that did not decode), and how it ended.
public struct FirebaseCallRecord: Sendable {
  /// "accounts:signUp", "token"; "unknown" for a path no endpoint serves.
  public let name: String
  public let nativeMethod: String?
  public let requestID: String
  /// The native error, or one standing for the HTTP-level refusal; nil on success.
  public let error: RPCError?
  public let nanos: UInt64
  /// The project and account the native handlers reported.
  public let fields: CallLogFields
  public let httpStatus: Int
}
