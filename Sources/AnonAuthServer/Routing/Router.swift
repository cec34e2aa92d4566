import AnonAuthService
import AnonAuthWire

/// Maps a method path to its handler, and holds the order of checks docs/protocol.md
/// §6 fixes: method known, then credentials, then payload, then the handler.
public struct Router: Sendable {
  /// Runs before the payload is parsed; throws `API_KEY_INVALID`/`ADMIN_KEY_INVALID`.
  public typealias Authenticator = @Sendable (CallContext) async throws(RPCError) -> Void
  typealias RawHandler = @Sendable (CallContext, [UInt8]) async throws(RPCError) -> [UInt8]

  private struct Route: Sendable {
    let authenticate: Authenticator?
    /// What passing `authenticate` proves: every AdminService method checks the admin
    /// key (docs/protocol.md §3), every other checked method the API key.
    let credential: CallCredential
    let handle: RawHandler
  }

  private var routes: [String: Route] = [:]

  public init() {}

  /// Registers a unary method. The request is decoded only after `authenticate` passed;
  /// a payload that does not parse is `MALFORMED_REQUEST`.
  public mutating func unary<Request: ProtoMessage, Response: ProtoMessage>(
    _ service: String, _ method: String,
    authenticate: Authenticator? = nil,
    _ handler: @escaping @Sendable (Request, CallContext) async throws(RPCError) -> Response
  ) {
    routes["/\(service)/\(method)"] = Route(
      authenticate: authenticate, credential: service == AdminService.name ? .adminKey : .apiKey,
      handle: { context, payload throws(RPCError) in
        let request: Request
        do {
          request = try Request(serializedBytes: payload)
        } catch {
          throw RPCError(.malformedRequest, "the payload is not a \(Request.self)")
        }
        return try await handler(request, context).serializedBytes()
      })
  }

  public var methods: [String] { routes.keys.sorted() }

  public func knows(_ method: String) -> Bool { routes[method] != nil }

  /// Answers one call: the response payload, or the error to send as its status.
  public func handle(_ context: CallContext, payload: [UInt8]) async throws(RPCError) -> [UInt8] {
    // A long name is never looked up, and never echoed: the client chose it.
    guard context.method.utf8.count <= CallLimits.maxMethodBytes else {
      throw RPCError(.unknownMethod, "unknown method (a name of \(context.method.utf8.count) bytes)")
    }
    guard let route = routes[context.method] else {
      throw RPCError(.unknownMethod, "unknown method \(context.method)")
    }
    try Self.stopIfCancelled()
    if let authenticate = route.authenticate {
      try await authenticate(context)
      context.authenticated?(route.credential)
    }
    // An expired or cancelled call (its deadline passed, its connection closed) is not
    // decoded, and so never reaches the CPU pools or the writer: its answer was sent or
    // has nowhere to go.
    try Self.stopIfCancelled()
    return try await route.handle(context, payload)
  }

  private static func stopIfCancelled() throws(RPCError) {
    if Task.isCancelled { throw RPCError(.deadlineExceeded, "the call was cancelled before its work began") }
  }
}
