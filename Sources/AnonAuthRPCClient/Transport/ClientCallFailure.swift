import AnonAuthWire

/// Why a call on one connection got no answer, whichever transport carried it.
enum ClientCallFailure: Error, Sendable {
  /// The server never processed the call (sent after its `GoAway` or GOAWAY, a refused
  /// stream, or the connection failed before the call was written): safe to send again
  /// on another connection.
  case notProcessed(String)
  case failed(RPCError)
}
