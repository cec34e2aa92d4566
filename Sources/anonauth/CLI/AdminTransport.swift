import AnonAuthRPCClient
import AnonAuthWire

/// The transport of `anonauth admin`: every call carries the admin key, may take ten
/// minutes (an import batch, a backup), and fails as a `CLIError` that names the method.
struct AdminTransport: RPCTransport {
  let client: RPCClient
  /// The admin key's `authorization` metadata.
  let metadata: [String: String]

  func unary<Request: ProtoMessage, Response: ProtoMessage>(
    _ method: MethodDescriptor<Request, Response>, _ request: Request, metadata: [String: String],
    timeoutMs: UInt32?
  ) async throws(CLIError) -> Response {
    do {
      return try await client.unary(
        method, request, metadata: metadata.merging(self.metadata) { $1 }, timeoutMs: timeoutMs ?? 600_000)
    } catch {
      throw .failed(
        "\(method.name): \(error.reason.isEmpty ? "\(error.code)" : error.reason): \(error.message)")
    }
  }
}
