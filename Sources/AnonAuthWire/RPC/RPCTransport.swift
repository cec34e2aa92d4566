/// What carries a unary call for the generated client stubs (`AccountServiceClient`):
/// the RPC client, or a wrapper that adds a credential and turns errors into its own.
/// `Failure` is the error its calls throw, so that a stub's caller keeps typed throws.
public protocol RPCTransport: Sendable {
  associatedtype Failure: Error

  /// Sends `request` to `method` and decodes its response.
  /// - Parameters:
  ///   - metadata: the call's metadata, besides what the transport adds itself.
  ///   - timeoutMs: the call's deadline; nil: the transport's default.
  func unary<Request: ProtoMessage, Response: ProtoMessage>(
    _ method: MethodDescriptor<Request, Response>, _ request: Request, metadata: [String: String],
    timeoutMs: UInt32?
  ) async throws(Failure) -> Response
}
