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

  /// Registers a unary method, as the generated `register(in:)` of each service's handler
  /// protocol does: `credential` is the check that runs before the payload is decoded, and
  /// what passing it proves (nil: the method needs none).
  public mutating func unary<Request: ProtoMessage, Response: ProtoMessage>(
    _ method: MethodDescriptor<Request, Response>, credential: (CallCredential, Authenticator)?,
    _ handler: @escaping @Sendable (Request, CallContext) async throws(RPCError) -> Response
  ) {
    add(method.path, credential: credential?.0 ?? .apiKey, authenticate: credential?.1, handler)
  }

  /// Registers a unary method by name; its credential is the admin key in AdminService,
  /// the API key elsewhere.
  public mutating func unary<Request: ProtoMessage, Response: ProtoMessage>(
    _ service: String, _ method: String,
    authenticate: Authenticator? = nil,
    _ handler: @escaping @Sendable (Request, CallContext) async throws(RPCError) -> Response
  ) {
    add(
      "/\(service)/\(method)", credential: service == AdminServiceMethods.serviceName ? .adminKey : .apiKey,
      authenticate: authenticate, handler)
  }

  /// The request is decoded only after `authenticate` passed; a payload that does not parse
  /// is `MALFORMED_REQUEST`.
  private mutating func add<Request: ProtoMessage, Response: ProtoMessage>(
    _ path: String, credential: CallCredential, authenticate: Authenticator?,
    _ handler: @escaping @Sendable (Request, CallContext) async throws(RPCError) -> Response
  ) {
    routes[path] = Route(
      authenticate: authenticate, credential: credential,
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
