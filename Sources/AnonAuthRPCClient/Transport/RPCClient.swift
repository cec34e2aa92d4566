import AnonAuthNet
import AnonAuthWire
import Glibc
import Synchronization

/// A client of the AnonAuth RPC: one TLS connection that multiplexes every call, made
/// on first use and made again after the server says `GoAway` or the connection drops.
///
/// Given several endpoints (the daemons of a replicated deployment), it uses one at a
/// time and moves to the next when a connection cannot be made or is lost before a call
/// was processed; such a call is sent again there. Calls are `async`; each has a deadline,
/// sent to the server as `timeout_ms` and also enforced here, across every attempt.
public final class RPCClient: ByteCallTransport {
  /// The endpoints in order of preference; the first is where calls go while it answers.
  public let endpoints: [ClientEndpoint]
  private let context: TLSContext
  private let addresses: [SocketAddress]
  /// The connection in use, and the endpoint it (or the next one made) goes to.
  private let current = Mutex<(handle: ConnectionHandle?, endpoint: Int)>((nil, 0))
  /// The deadline of calls that give none.
  public let defaultTimeoutMs: UInt32

  /// The first endpoint: the only one of a client made with one.
  public var endpoint: ClientEndpoint { endpoints[0] }

  /// - Throws: `RPCClientError` for a bad address or an unusable CA file.
  public convenience init(endpoint: ClientEndpoint, defaultTimeoutMs: UInt32 = ProtocolDefaults.callTimeoutMs)
    throws(RPCClientError)
  {
    try self.init(endpoints: [endpoint], defaultTimeoutMs: defaultTimeoutMs)
  }

  /// - Parameter endpoints: at least one; the TLS trust (CA file, `insecure`) of the first
  ///   applies to all, each keeps its own host and server name.
  /// - Throws: `RPCClientError` for no endpoint, a bad address or an unusable CA file.
  public init(endpoints: [ClientEndpoint], defaultTimeoutMs: UInt32 = ProtocolDefaults.callTimeoutMs)
    throws(RPCClientError)
  {
    guard let first = endpoints.first else { throw .badAddress("(no endpoint)") }
    self.endpoints = endpoints
    self.defaultTimeoutMs = defaultTimeoutMs
    var addresses: [SocketAddress] = []
    for endpoint in endpoints {
      do {
        addresses.append(try SocketAddress(host: endpoint.host, port: endpoint.port))
      } catch {
        throw .badAddress("\(endpoint.host):\(endpoint.port)")
      }
    }
    self.addresses = addresses
    context = try ClientTLSContexts.context(caFile: first.caFile, insecure: first.insecure)
    // OpenSSL writes to sockets with write(2): a peer's reset must not kill the process.
    signal(SIGPIPE, SIG_IGN)
  }

  /// Calls with raw payload bytes: for tools and tests that speak bytes.
  public func callRaw(
    _ method: String, payload: [UInt8], metadata: [String: String] = [:], timeoutMs: UInt32? = nil
  ) async throws(RPCError) -> [UInt8] {
    let reply = try await send(
      method, payload: payload, metadata: metadata, timeoutMs: timeoutMs ?? defaultTimeoutMs)
    if let status = reply.status, status.code != 0 {
      throw RPCError(
        code: StatusCode(rawValue: status.code), reason: status.reason, message: status.message,
        details: status.details)
    }
    return reply.payload
  }

  /// The whole reply, status and metadata included.
  public func send(
    _ method: String, payload: [UInt8], metadata: [String: String], timeoutMs: UInt32
  ) async throws(RPCError) -> Reply {
    try await CallAttempts.run(timeoutMs: timeoutMs, maxAttempts: maxAttempts, connect: connectionForCall) {
      connection, leftMs, isLast throws(RPCError) in
      let result: Result<Reply, ClientCallFailure> = await withCheckedContinuation { continuation in
        connection.execute { conn in
          conn.start(method: method, payload: payload, metadata: metadata, timeoutMs: leftMs) {
            continuation.resume(returning: $0)
          }
        }
      }
      switch result {
      case .success(let reply):
        return .answered(reply)
      case .failure(.failed(let error)) where error.reason == Reason.shuttingDown.name && !isLast:
        // Refused unprocessed by a draining daemon: another endpoint takes it.
        forget(connection)
        return .again(why: error.message)
      case .failure(.failed(let error)):
        throw error
      case .failure(.notProcessed(let why)):
        forget(connection)
        return .again(why: why)
      }
    }
  }

  /// Tries each endpoint at least once, and one alone three times.
  private var maxAttempts: Int { max(3, endpoints.count + 1) }

  /// Closes the connection; calls in flight fail with `UNAVAILABLE`.
  public func close() {
    let connection = current.withLock { current -> ConnectionHandle? in
      defer { current.handle = nil }
      return current.handle
    }
    connection?.execute { $0.close() }
  }

  /// Drops a connection that failed and moves the next connection to the next endpoint.
  private func forget(_ connection: ConnectionHandle) {
    current.withLock { current in
      guard current.handle?.id == connection.id else { return }
      current = (nil, (current.endpoint + 1) % endpoints.count)
    }
  }

  private func connectionForCall() throws -> ConnectionHandle {
    try current.withLock { current in
      if let existing = current.handle, existing.isUsable { return existing }
      let index = current.endpoint
      let endpoint = endpoints[index]
      let address = addresses[index]
      let loop = try ClientEventLoop.get()
      Socket.raiseDescriptorLimit()
      let fd: Int32
      do {
        fd = try Socket.connect(to: address)
      } catch {
        current.endpoint = (index + 1) % endpoints.count
        throw error
      }
      let tls = try TLSConnection(
        fd: fd, context: context, loop: loop, peer: address, connecting: true,
        serverName: endpoint.serverName ?? endpoint.host)
      let flags = ConnectionFlags()
      let connection = ClientConnection(tls: tls, flags: flags, maxFrameSize: endpoint.maxFrameSize)
      tls.delegate = connection
      tls.handshakeDelegate = connection
      let bound = ConnectionHandle(bound: LoopBound(connection, loop: loop), flags: flags)
      bound.execute { $0.tls.start() }
      current.handle = bound
      return bound
    }
  }
}
