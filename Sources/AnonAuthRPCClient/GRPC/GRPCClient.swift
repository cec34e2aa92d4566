import AnonAuthNet
import AnonAuthWire
import Glibc
import Synchronization

/// A gRPC client of AnonAuth: HTTP/2 (ALPN `h2`) over one TLS connection on the shared
/// client event loop, every call a stream of it, made on first use and made again after
/// the server's GOAWAY or a lost connection. It is a `ByteCallTransport`, so the
/// generated stubs call over it as over the native `RPCClient`:
/// `AccountServiceClient(grpc).signUp(request, metadata: ["x-api-key": key])`.
/// The bench compares the daemon's cost per call over both transports with it.
public final class GRPCClient: ByteCallTransport {
  private struct Handle: Sendable {
    let bound: LoopBound<GRPCConnection>
    let flags: ConnectionFlags
  }

  public let endpoint: ClientEndpoint
  /// The deadline of calls that give none.
  public let defaultTimeoutMs: UInt32
  private let context: TLSContext
  private let address: SocketAddress
  private let authority: String
  private let current = Mutex<Handle?>(nil)

  /// - Throws: `RPCClientError` for a bad address or an unusable CA file.
  public init(endpoint: ClientEndpoint, defaultTimeoutMs: UInt32 = ProtocolDefaults.callTimeoutMs)
    throws(RPCClientError)
  {
    self.endpoint = endpoint
    self.defaultTimeoutMs = defaultTimeoutMs
    do {
      address = try SocketAddress(host: endpoint.host, port: endpoint.port)
    } catch {
      throw .badAddress("\(endpoint.host):\(endpoint.port)")
    }
    authority =
      endpoint.host.contains(":")
      ? "[\(endpoint.host)]:\(endpoint.port)" : "\(endpoint.host):\(endpoint.port)"
    context = try ClientTLSContexts.context(
      caFile: endpoint.caFile, insecure: endpoint.insecure,
      applicationProtocol: GRPCConnection.applicationProtocol)
    signal(SIGPIPE, SIG_IGN)
  }

  /// Calls with raw message bytes. A call the server never processed (refused stream,
  /// GOAWAY, a connection lost before the request left) is sent again on a new
  /// connection, three attempts in all, within the one deadline.
  /// - Throws: `RPCError` with the server's status (reason and details from
  ///   `grpc-status-details-bin`), or a local `UNAVAILABLE` / `DEADLINE_EXCEEDED`.
  public func callRaw(
    _ method: String, payload: [UInt8], metadata: [String: String] = [:], timeoutMs: UInt32? = nil
  ) async throws(RPCError) -> [UInt8] {
    try await attempts(timeoutMs: timeoutMs) { connection, leftMs, completion in
      connection.start(
        path: method, message: payload, metadata: metadata, timeoutMs: leftMs, completion: completion)
    }
  }

  /// A plain HTTP/2 POST on the same connection, not gRPC: Firebase's JSON API as a
  /// browser or URLSession sends it over `h2`, for the bench. `headers` are lowercase.
  /// - Returns: the response body of a 200.
  /// - Throws: `RPCError` with reason `HTTP_<status>` for another status, or a local
  ///   `UNAVAILABLE` / `DEADLINE_EXCEEDED` as for a call.
  public func post(
    path: String, headers: [(name: String, value: String)], body: [UInt8], timeoutMs: UInt32? = nil
  ) async throws(RPCError) -> [UInt8] {
    try await attempts(timeoutMs: timeoutMs) { connection, leftMs, completion in
      connection.startPost(
        path: path, headers: headers, body: body, timeoutMs: leftMs, completion: completion)
    }
  }

  /// Runs one request through `start`, sent again on a new connection when the server
  /// never processed it, three attempts in all within the one deadline.
  private func attempts(
    timeoutMs: UInt32?,
    _ start: @escaping @Sendable (GRPCConnection, UInt32, @escaping GRPCConnection.Completion) -> Void
  ) async throws(RPCError) -> [UInt8] {
    try await CallAttempts.run(timeoutMs: timeoutMs ?? defaultTimeoutMs, maxAttempts: 3, connect: connection)
    {
      handle, leftMs, _ throws(RPCError) in
      let result: Result<[UInt8], ClientCallFailure> = await withCheckedContinuation { continuation in
        handle.bound.execute { connection in
          start(connection, leftMs) { continuation.resume(returning: $0) }
        }
      }
      switch result {
      case .success(let message): return .answered(message)
      case .failure(.failed(let error)): throw error
      case .failure(.notProcessed(let why)):
        forget(handle)
        return .again(why: why)
      }
    }
  }

  /// Closes the connection; calls in flight fail with `UNAVAILABLE`.
  public func close() {
    let handle = current.withLock { current -> Handle? in
      defer { current = nil }
      return current
    }
    handle?.bound.execute { $0.close() }
  }

  private func forget(_ handle: Handle) {
    current.withLock { current in
      if current?.bound.id == handle.bound.id { current = nil }
    }
  }

  private func connection() throws -> Handle {
    try current.withLock { current in
      if let existing = current, existing.flags.isUsable { return existing }
      let loop = try ClientEventLoop.get()
      Socket.raiseDescriptorLimit()
      let fd = try Socket.connect(to: address)
      let tls = try TLSConnection(
        fd: fd, context: context, loop: loop, peer: address,
        connecting: true, serverName: endpoint.serverName ?? endpoint.host)
      let flags = ConnectionFlags()
      let connection = GRPCConnection(
        tls: tls, authority: authority, flags: flags, maxMessageSize: endpoint.maxFrameSize)
      tls.delegate = connection
      tls.handshakeDelegate = connection
      let handle = Handle(bound: LoopBound(connection, loop: loop), flags: flags)
      handle.bound.execute { connection in
        guard connection.setUp() else {
          connection.tls.close(error: GRPCConnectionError("nghttp2 session set-up failed"))
          return
        }
        connection.tls.start()
      }
      current = handle
      return handle
    }
  }
}
