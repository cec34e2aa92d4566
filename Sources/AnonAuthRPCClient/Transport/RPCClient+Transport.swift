import AnonAuthWire

/// The generated client stubs call through the RPC client directly:
/// `AccountServiceClient(client).signUp(request, metadata: ["x-api-key": key])`.
extension RPCClient: RPCTransport {
  public func unary<Request: ProtoMessage, Response: ProtoMessage>(
    _ method: MethodDescriptor<Request, Response>, _ request: Request, metadata: [String: String],
    timeoutMs: UInt32?
  ) async throws(RPCError) -> Response {
    try await call(method.path, request, metadata: metadata, timeoutMs: timeoutMs, as: Response.self)
  }
}
