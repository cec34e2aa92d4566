/// The one request message of a unary or server-streaming local method: the first
/// message the client sends.
enum GRPCUnaryRequest {
  /// The first message; nil when the client half-closes without one.
  static func first(of requests: AsyncStream<[UInt8]>) async -> [UInt8]? {
    for await message in requests {
      return message
    }
    return nil
  }

  /// The answer to a call that ended without its request, as grpc-java words it.
  static let missing = GRPCFinalStatus(.internalError, "Half-closed without a request")

  /// The answer to a request whose bytes do not decode, as grpc-go words it.
  static let undecodable = GRPCFinalStatus(.internalError, "grpc: error unmarshalling request")
}
