import AnonAuthWire

/// Why a gRPC call got no answer.
enum GRPCCallFailure: Error, Sendable {
  /// The server never processed the call (refused, or the connection was gone before the
  /// request left): safe to send again on another connection.
  case notProcessed(String)
  case failed(RPCError)
}
