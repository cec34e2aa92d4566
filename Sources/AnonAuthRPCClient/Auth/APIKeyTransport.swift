import AnonAuthWire

/// The transport of `Auth`'s calls: each carries the project's API key, and fails with
/// an `AuthError` rather than the raw `RPCError`.
struct APIKeyTransport: RPCTransport {
  let client: RPCClient
  let apiKey: String

  func unary<Request: ProtoMessage, Response: ProtoMessage>(
    _ method: MethodDescriptor<Request, Response>, _ request: Request, metadata: [String: String],
    timeoutMs: UInt32?
  ) async throws(AuthError) -> Response {
    do {
      return try await client.unary(
        method, request, metadata: metadata.merging(["x-api-key": apiKey]) { $1 }, timeoutMs: timeoutMs)
    } catch {
      throw AuthError(error)
    }
  }
}
