import AnonAuthService
import AnonAuthWire

/// Maps a method path to its handler, and holds the order of checks docs/protocol.md
/// §6 fixes: method known, then credentials, then payload, then the handler.
///
/// Every transport reaches the same typed handler through it. The byte transports
/// (native frames, gRPC messages) call `handle(_:payload:)`: the payload is decoded into
/// the method's request type and the response encoded back. A transport that builds the
/// request itself (the JSON API) calls `call(_:_:context:)` with the typed request and
/// takes the typed response, with no encoding in between; the checks before the handler
/// are the same code for both (`admit`).
public struct Router: Sendable {
  /// Runs before the payload is parsed; throws `API_KEY_INVALID`/`ADMIN_KEY_INVALID`.
  public typealias Authenticator = @Sendable (CallContext) async throws(RPCError) -> Void
  typealias RawHandler = @Sendable (CallContext, [UInt8]) async throws(RPCError) -> [UInt8]

  private struct Route: Sendable {
    let authenticate: Authenticator?
    /// What passing `authenticate` proves: every AdminService method checks the admin
    /// key (docs/protocol.md §3), every other checked method the API key.
    let credential: CallCredential
    /// Decode, the typed handler, encode: what a byte transport's call runs.
    let handle: RawHandler
    /// The typed handler itself, a `TypedRoute<Request, Response>`.
    let typed: any Sendable
  }

  /// One method's handler with its types, so that `call` can find it again by casting.
  private final class TypedRoute<Request: ProtoMessage, Response: ProtoMessage>: Sendable {
    let handler: @Sendable (Request, CallContext) async throws(RPCError) -> Response

    init(_ handler: @escaping @Sendable (Request, CallContext) async throws(RPCError) -> Response) {
      self.handler = handler
    }
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
          throw Self.malformed(Request.self)
        }
        return try await handler(request, context).serializedBytes()
      },
      typed: TypedRoute(handler))
  }

  public var methods: [String] { routes.keys.sorted() }

  public func knows(_ method: String) -> Bool { routes[method] != nil }

  /// Answers one call of a byte transport: the response payload, or the error to send as
  /// its status.
  public func handle(_ context: CallContext, payload: [UInt8]) async throws(RPCError) -> [UInt8] {
    let route = try await admit(context, path: context.method)
    return try await route.handle(context, payload)
  }

  /// Answers one call whose request the transport built itself (the JSON API): the same
  /// checks as `handle`, in the same order, then the typed handler, with no encoding of
  /// the request or the response. `context.method` is `method.path`.
  ///
  /// A request of a type that may carry many values (an admin batch) is held to the
  /// decode bounds its encoding would meet on a byte transport (`ProtoPreScan`): over
  /// them it is `MALFORMED_REQUEST`, as it was when this path encoded every request.
  public func call<Request: ProtoMessage, Response: ProtoMessage>(
    _ method: MethodDescriptor<Request, Response>, _ request: Request, context: CallContext
  ) async throws(RPCError) -> Response {
    let route = try await admit(context, path: method.path)
    guard let typed = route.typed as? TypedRoute<Request, Response> else {
      // Registered with other types than the descriptor says (a hand-made descriptor):
      // the byte path, which decodes whatever the route takes.
      let bytes = try await route.handle(context, request.serializedBytes())
      do {
        return try Response(serializedBytes: bytes)
      } catch {
        throw RPCError(.internalError, "the answer of \(method.path) did not decode")
      }
    }
    guard request.isWithinDecodeBounds else { throw Self.malformed(Request.self) }
    return try await typed.handler(request, context)
  }

  /// The checks every call passes before its request is read, whatever carried it: a
  /// known method, not cancelled, the credential (then `context.authenticated`), not
  /// cancelled since.
  private func admit(_ context: CallContext, path: String) async throws(RPCError) -> Route {
    // A long name is never looked up, and never echoed: the client chose it.
    guard path.utf8.count <= CallLimits.maxMethodBytes else {
      throw RPCError(.unknownMethod, "unknown method (a name of \(path.utf8.count) bytes)")
    }
    guard let route = routes[path] else {
      throw RPCError(.unknownMethod, "unknown method \(path)")
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
    return route
  }

  private static func malformed<Request: ProtoMessage>(_: Request.Type) -> RPCError {
    RPCError(.malformedRequest, "the payload is not a \(Request.self)")
  }

  private static func stopIfCancelled() throws(RPCError) {
    if Task.isCancelled { throw RPCError(.deadlineExceeded, "the call was cancelled before its work began") }
  }
}
