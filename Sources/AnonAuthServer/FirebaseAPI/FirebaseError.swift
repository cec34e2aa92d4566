import AnonAuthCrypto
import AnonAuthWire

/// An error as Firebase's API sends it: an HTTP status and
/// `{"error":{"code":400,"message":"EMAIL_EXISTS","errors":[{"message":"EMAIL_EXISTS","domain":"global","reason":"invalid"}]}}`.
/// Native errors become one through the reason catalogue's Firebase column
/// (`ReasonCatalogue.firebaseAnswers`), so docs/reasons.md lists every mapping.
public struct FirebaseError: Error, Sendable {
  public var status: Int
  public var message: String
  /// Google's canonical status name ("INVALID_ARGUMENT"), sent as `error.status` for the
  /// errors Google's front end makes itself (bad JSON, unknown path); nil for Firebase's own.
  public var statusName: String?
  /// The native error this came from, for endpoints that answer some specially and for
  /// the call's log line and metrics.
  public var rpcError: RPCError?
  /// `errors[0].domain` and `.reason`: Google's `usageLimits`/`keyInvalid` for a bad API
  /// key (what Firebase's Apple SDK reads as `invalidAPIKey`), `global`/`invalid` otherwise.
  public var errorsDomain = "global"
  public var errorsReason = "invalid"
  /// Extra reply headers (`retry-after`).
  public var headers: [(name: String, value: String)] = []

  public init(status: Int, message: String, statusName: String? = nil) {
    self.status = status
    self.message = message
    self.statusName = statusName
  }

  /// The Firebase answer for a native error.
  public init(_ error: RPCError) {
    let answer = ReasonCatalogue.firebaseAnswer(forReason: error.reason, code: error.code)
    let detail = answer.withDetail && !error.message.isEmpty ? " : \(error.message)" : ""
    self.init(status: answer.httpStatus, message: answer.message + detail)
    rpcError = error
    if error.reason == Reason.apiKeyInvalid.name {
      errorsDomain = "usageLimits"
      errorsReason = "keyInvalid"
    }
    if let seconds = error.details["retry_after_seconds"] { headers.append(("retry-after", seconds)) }
  }

  /// The native error, or the one that stands for an HTTP-level refusal in the call's log
  /// line and metrics.
  var loggedError: RPCError {
    if let rpcError { return rpcError }
    switch status {
    case 404, 405: return RPCError(.unknownMethod, message)
    default: return RPCError(.malformedRequest, message)
    }
  }

  /// The body is not JSON, not UTF-8, too deep, or not an object.
  static func invalidJSON(_ detail: String) -> FirebaseError {
    FirebaseError(
      status: 400, message: "Invalid JSON payload received. \(detail).", statusName: "INVALID_ARGUMENT")
  }

  /// A member of the wrong JSON type.
  static func invalidValue(_ field: String, expected: String) -> FirebaseError {
    FirebaseError(
      status: 400, message: "Invalid JSON payload received. Invalid value at '\(field)' (\(expected)).",
      statusName: "INVALID_ARGUMENT")
  }

  static func notFound(path: String) -> FirebaseError {
    FirebaseError(status: 404, message: "NOT_FOUND : no API method at this path", statusName: "NOT_FOUND")
  }

  static func methodNotAllowed(_ method: String) -> FirebaseError {
    FirebaseError(
      status: 405, message: "METHOD_NOT_ALLOWED : this path does not take \(method.prefix(16))",
      statusName: "METHOD_NOT_ALLOWED")
  }

  /// The error body.
  public var json: JSONValue {
    var error: [String: JSONValue] = ["code": .int(Int64(status)), "message": .string(message)]
    // Google's front end answers its own errors with `status` and no `errors`; Firebase's
    // own errors carry `errors`.
    if let statusName {
      error["status"] = .string(statusName)
    } else {
      error["errors"] = [
        ["message": .string(message), "domain": .string(errorsDomain), "reason": .string(errorsReason)]
      ]
    }
    return ["error": .object(error)]
  }

  public var reply: HTTPReply {
    HTTPReply(status: status, headers: FirebaseAPI.jsonHeaders + headers, body: json.jsonBytes)
  }
}
