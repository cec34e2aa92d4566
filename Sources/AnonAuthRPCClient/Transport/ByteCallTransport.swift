import AnonAuthWire

/// A client that moves a call's payload bytes over its own connections: the native
/// `RPCClient` and the `GRPCClient`. What is the same whatever the wire, the typed call
/// around the bytes, the stubs' entry (`RPCTransport`) and the attempts within one
/// deadline (`withAttempts`), is written here once.
public protocol ByteCallTransport: RPCTransport where Failure == RPCError {
  /// The deadline of calls that give none.
  var defaultTimeoutMs: UInt32 { get }

  /// Calls `method` with raw payload bytes: for tools and tests that speak bytes.
  /// - Throws: `RPCError` with the server's status, or a local `UNAVAILABLE` /
  ///   `DEADLINE_EXCEEDED`.
  func callRaw(_ method: String, payload: [UInt8], metadata: [String: String], timeoutMs: UInt32?)
    async throws(RPCError) -> [UInt8]
}

extension ByteCallTransport {
  /// Calls `method` with a typed request and decodes the typed response.
  /// - Throws: `RPCError` with the server's status, or a local one (`UNAVAILABLE`,
  ///   `DEADLINE_EXCEEDED`, `INTERNAL` for a response that does not parse).
  public func call<Request: ProtoMessage, Response: ProtoMessage>(
    _ method: String, _ request: Request, metadata: [String: String] = [:], timeoutMs: UInt32? = nil,
    as: Response.Type = Response.self
  ) async throws(RPCError) -> Response {
    let payload = try await callRaw(
      method, payload: request.serializedBytes(), metadata: metadata, timeoutMs: timeoutMs)
    do {
      return try Response(serializedBytes: payload)
    } catch {
      throw RPCError(
        code: .internalError, reason: "INTERNAL", message: "the response is not a \(Response.self)")
    }
  }

  /// The generated client stubs call through it directly:
  /// `AccountServiceClient(client).signUp(request, metadata: ["x-api-key": key])`.
  public func unary<Request: ProtoMessage, Response: ProtoMessage>(
    _ method: MethodDescriptor<Request, Response>, _ request: Request, metadata: [String: String],
    timeoutMs: UInt32?
  ) async throws(RPCError) -> Response {
    try await call(method.path, request, metadata: metadata, timeoutMs: timeoutMs, as: Response.self)
  }
}

/// One call's attempts within one deadline, however many connections it is tried on.
enum CallAttempts {
  /// What one attempt came to.
  enum Outcome<Value> {
    case answered(Value)
    /// Not processed by the server: sent again unless this was the last attempt, which
    /// is then `UNAVAILABLE` with `why`.
    case again(why: String)
  }

  /// Runs `attempt` until it answers or throws, at most `maxAttempts` times: a connection
  /// that `connect` cannot make costs an attempt too (the last such failure is
  /// `UNAVAILABLE`), and no attempt starts once the deadline of `timeoutMs` has passed
  /// (`DEADLINE_EXCEEDED`). `attempt` gets the connection, the milliseconds left, and
  /// whether it is the last attempt.
  static func run<Connection, Value>(
    timeoutMs: UInt32, maxAttempts: Int, connect: () throws -> Connection,
    attempt: (Connection, _ leftMs: UInt32, _ isLast: Bool) async throws(RPCError) -> Outcome<Value>
  ) async throws(RPCError) -> Value {
    let clock = ContinuousClock()
    let deadline = clock.now + .milliseconds(Int(timeoutMs))
    var count = 0
    while true {
      count += 1
      let left = deadline - clock.now
      let leftMs = left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000
      guard leftMs > 0 else { throw RPCError(.deadlineExceeded, "no reply within \(timeoutMs) ms") }
      let connection: Connection
      do {
        connection = try connect()
      } catch {
        if count < maxAttempts { continue }
        throw RPCError(code: .unavailable, reason: "UNAVAILABLE", message: "\(error)")
      }
      switch try await attempt(connection, UInt32(clamping: leftMs), count >= maxAttempts) {
      case .answered(let value):
        return value
      case .again(let why):
        if count >= maxAttempts { throw RPCError(code: .unavailable, reason: "UNAVAILABLE", message: why) }
      }
    }
  }
}
