import AnonAuthWire

/// How a gRPC call ends, as its trailers (or its trailers-only answer) say it:
/// `grpc-status`, the percent-encoded `grpc-message`, and for an error that has one of
/// AnonAuth's reasons, `grpc-status-details-bin` (`GRPCStatusDetails`).
struct GRPCStatus: Equatable {
  var code: StatusCode
  var message: String
  /// The native error, carried in the details; nil for gRPC's own protocol errors (a
  /// malformed `grpc-timeout`, a message over the limit...), which have no reason, as a
  /// grpc-go server sends none for them.
  var error: RPCError?

  init(_ code: StatusCode, _ message: String) {
    self.code = code
    self.message = message
    error = nil
  }

  init(_ error: RPCError) {
    code = error.code
    message = error.message
    self.error = error
  }

  static let ok = GRPCStatus(.ok, "")

  /// The status fields of a trailer block.
  var fields: [HTTP2Header] {
    var fields = [HTTP2Header("grpc-status", String(code.rawValue))]
    if !message.isEmpty {
      fields.append(HTTP2Header("grpc-message", GRPCMessageText.percentEncoded(message)))
    }
    if let error {
      fields.append(HTTP2Header("grpc-status-details-bin", GRPCStatusDetails.headerValue(for: error)))
    }
    return fields
  }

  /// The response's first header block: HTTP 200 (or `httpStatus` for a request that is
  /// not gRPC enough to be served, as grpc-go answers), the content type, and the
  /// request id the call was logged with.
  static func responseHeaders(requestID: String, httpStatus: Int = 200) -> [HTTP2Header] {
    [
      HTTP2Header(":status", String(httpStatus)), HTTP2Header("content-type", "application/grpc"),
      HTTP2Header("x-request-id", requestID),
    ]
  }

  /// A trailers-only answer: the response headers and the status in one block that ends
  /// the stream (how gRPC answers a call that fails before any message).
  func trailersOnly(requestID: String, httpStatus: Int = 200, extra: [HTTP2Header] = []) -> [HTTP2Header] {
    Self.responseHeaders(requestID: requestID, httpStatus: httpStatus) + extra + fields
  }
}
