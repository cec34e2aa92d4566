import AnonAuthWire

/// Turns what a response stream carried (headers and trailers, merged; the body) into
/// the call's outcome: the message, or an `RPCError` with the same code, reason, message
/// and details the native transport would have given.
public enum GRPCCallOutcome {
  /// - Parameters:
  ///   - fields: response headers and trailers by lowercase name (trailers win).
  ///   - body: the DATA bytes read.
  public static func result(
    fields: [String: String], body: GRPCMessageReader
  ) -> Result<[UInt8], RPCError> {
    guard let statusText = fields["grpc-status"] else {
      // No gRPC status: an HTTP answer from something that is not a gRPC server, or a
      // stream cut short. gRPC's PROTOCOL-HTTP2 maps the HTTP status.
      let http = fields[":status"].flatMap { Int($0) } ?? 0
      let code = httpStatusCode(http)
      return .failure(
        RPCError(code: code, reason: code.description, message: "HTTP \(http) without grpc-status"))
    }
    guard let raw = Int32(statusText) else {
      return .failure(
        RPCError(code: .internalError, reason: "INTERNAL", message: "grpc-status \"\(statusText)\""))
    }
    if raw == 0 {
      do {
        return .success(try body.message())
      } catch {
        return .failure(
          RPCError(code: .internalError, reason: "INTERNAL", message: "response body: \(error)"))
      }
    }
    return .failure(error(code: StatusCode(rawValue: raw), fields: fields))
  }

  /// The error a non-OK status stands for: the reason and details from
  /// `grpc-status-details-bin` when it carries them, else the code's name.
  static func error(code: StatusCode, fields: [String: String]) -> RPCError {
    let message = fields["grpc-message"].map { GRPCPercentEncoding.decode($0.utf8) } ?? ""
    if let header = fields["grpc-status-details-bin"],
      let decoded = GRPCStatusDetails.decode(header: header.utf8), let reason = decoded.reason
    {
      return RPCError(code: code, reason: reason, message: message, details: decoded.details)
    }
    return RPCError(code: code, reason: code.description, message: message)
  }

  /// gRPC's mapping of an HTTP status to a code when no `grpc-status` came.
  static func httpStatusCode(_ status: Int) -> StatusCode {
    switch status {
    case 400: .internalError
    case 401: .unauthenticated
    case 403: .permissionDenied
    case 404: .unimplemented
    case 429, 502, 503, 504: .unavailable
    default: .unknown
    }
  }
}
