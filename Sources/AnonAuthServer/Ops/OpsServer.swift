import AnonAuthNet
import AnonAuthService
import Glibc
import Synchronization

/// The plain-HTTP ops port: health, readiness, metrics and public keys. One request per
/// connection, on its own event loop so that RPC load cannot starve the probes.
public final class OpsServer: Sendable {
  public typealias Route = @Sendable () -> HTTPResponse

  private let routes: [String: Route]
  private let loop: EventLoop
  private let listener = Mutex<UncheckedBox<OpsListener>?>(nil)
  private let logger: Logger

  public init(routes: [String: Route], logger: Logger) throws {
    self.routes = routes
    self.logger = logger
    self.loop = try EventLoop(name: "anonauth-ops")
  }

  /// Binds and starts; returns the bound address.
  public func start(on address: SocketAddress) throws -> SocketAddress {
    let (fd, bound) = try Socket.listen(on: address, backlog: 128)
    loop.start()
    let routes = self.routes
    let loop = self.loop
    let logger = self.logger
    let box = UncheckedBox(OpsListener(fd: fd, loop: loop, routes: routes, logger: logger))
    loop.execute {
      do {
        try box.value.start()
      } catch {
        logger.error("ops listener failed", ["error": .string("\(error)")])
      }
    }
    listener.withLock { $0 = box }
    return bound
  }

  public func stop() {
    guard let box = listener.withLock({ $0 }) else { return }
    loop.execute { box.value.close() }
    loop.stopAndWait()
  }
}

/// Accepts ops connections and answers each one request. Confined to the ops loop.
final class OpsListener {
  private let loop: EventLoop
  private let routes: [String: OpsServer.Route]
  private var connections: [ObjectIdentifier: OpsConnection] = [:]
  private var acceptLoop: AcceptLoop?

  /// Probes and scrapers need a handful; the ops port never holds more than this, so it
  /// cannot eat the process's descriptors.
  static let maxConnections = 128
  /// At most this many from one address, so that one client cannot take every place.
  static let maxConnectionsPerIP = 16
  private var nextSerial: UInt64 = 0

  init(fd: Int32, loop: EventLoop, routes: [String: OpsServer.Route], logger: Logger) {
    self.loop = loop
    self.routes = routes
    acceptLoop = AcceptLoop(
      fd: fd, loop: loop, onAccept: { [unowned self] fd, peer in serve(fd, peer: peer?.host ?? "") },
      onError: { logger.error("ops listener paused", ["error": .string($0)]) })
  }

  func start() throws(SystemError) {
    try acceptLoop?.start()
  }

  func close() {
    acceptLoop?.close()
    for connection in Array(connections.values) { connection.finish() }
  }

  /// Admits a new connection. At the per-address or the global cap, the oldest
  /// connection still waiting for its request head (of that address, or of any) is closed
  /// to make room: a client that holds sockets open without asking (slowloris) cannot keep
  /// a probe out, since each new one displaces the stalest. Failing that, the oldest one
  /// already answered and only lingering for its client's close goes. Only when every
  /// place is taken by a response still being written is the new one refused.
  private func serve(_ fd: Int32, peer: String) {
    let fromPeer = connections.values.filter { $0.peer == peer }
    if fromPeer.count >= Self.maxConnectionsPerIP && !evictOldestWaiting(fromPeer) {
      Socket.close(fd)
      return
    }
    if connections.count >= Self.maxConnections && !evictOldestWaiting(connections.values) {
      Socket.close(fd)
      return
    }
    nextSerial &+= 1
    let connection = OpsConnection(fd: fd, peer: peer, serial: nextSerial, loop: loop, routes: routes) {
      [weak self] done in
      self?.connections[ObjectIdentifier(done)] = nil
    }
    connections[ObjectIdentifier(connection)] = connection
    connection.start()
  }

  /// Closes the oldest of `candidates` still reading its head, else the oldest
  /// lingering after its answer; false when there is neither.
  private func evictOldestWaiting<C: Collection<OpsConnection>>(_ candidates: C) -> Bool {
    let byAge: (OpsConnection, OpsConnection) -> Bool = { $0.serial < $1.serial }
    guard
      let oldest = candidates.filter(\.isWaitingForHead).min(by: byAge)
        ?? candidates.filter(\.isLingering).min(by: byAge)
    else { return false }
    oldest.finish()
    return true
  }
}

/// One ops HTTP exchange: read the head (at most 8 KiB, within 2 s), answer, close.
final class OpsConnection: EventHandler {
  private let fd: Int32
  /// The client's numeric address, for the per-address cap.
  let peer: String
  /// Order of acceptance: the lowest is the oldest.
  let serial: UInt64
  private let loop: EventLoop
  private let routes: [String: OpsServer.Route]
  private let onFinish: (OpsConnection) -> Void
  private var registration: UInt64 = 0
  private var input: [UInt8] = []
  private var output: [UInt8] = []
  private var written = 0
  private var responding = false
  private var lingering = false
  private var done = false
  private var timer: UInt64?

  static let maxHead = 8 * 1024
  /// The whole request head must arrive within this: a probe sends it at once.
  static let headTimeoutNanos: UInt64 = 2_000_000_000

  /// Not yet answering: what may be closed to make room for a new connection.
  var isWaitingForHead: Bool { !responding && !lingering && !done }
  /// Answered, and only waiting (at most a second) for the client to close.
  var isLingering: Bool { lingering && !done }

  init(
    fd: Int32, peer: String, serial: UInt64, loop: EventLoop, routes: [String: OpsServer.Route],
    onFinish: @escaping (OpsConnection) -> Void
  ) {
    self.fd = fd
    self.peer = peer
    self.serial = serial
    self.loop = loop
    self.routes = routes
    self.onFinish = onFinish
  }

  func start() {
    do {
      registration = try loop.register(fd: fd, events: .readable, handler: self)
    } catch {
      finish()
      return
    }
    timer = loop.schedule(afterNanos: Self.headTimeoutNanos) { [weak self] in self?.finish() }
  }

  func handleEvents(_ events: IOEvents) {
    if lingering {
      drainUntilClosed()
      return
    }
    if responding {
      writeOut()
      return
    }
    let buffer = loop.scratch
    while true {
      let n = read(fd, buffer.baseAddress, buffer.count)
      if n > 0 {
        input.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
        if let end = headEnd() {
          respond(to: input[..<end])
          return
        }
        if isMalformedSoFar() {
          answer(HTTPResponse(status: 400, body: "malformed request\n"))
          return
        }
        if input.count > Self.maxHead {
          answer(HTTPResponse(status: 431, body: "request head too large\n"))
          return
        }
        continue
      }
      if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return }
      if n < 0 && errno == EINTR { continue }
      finish()
      return
    }
  }

  /// Whether what has arrived already cannot become a valid head: a control or non-ASCII
  /// byte (a TLS ClientHello on the plain port, say), a bare LF, or a complete request
  /// line that does not parse. Answered at once instead of after the head timeout.
  private func isMalformedSoFar() -> Bool {
    for (i, byte) in input.enumerated() {
      if byte == 10 && (i == 0 || input[i - 1] != 13) { return true }
      if byte == 13 || byte == 10 || byte == 9 { continue }
      if byte < 0x20 || byte >= 0x7F { return true }
    }
    guard let lineEnd = input.firstIndex(of: 13), lineEnd + 1 < input.count else { return false }
    return HTTPRequestHead(input[..<lineEnd]) == nil
  }

  private func headEnd() -> Int? {
    guard input.count >= 4 else { return nil }
    for i in 0...(input.count - 4)
    where input[i] == 13 && input[i + 1] == 10 && input[i + 2] == 13 && input[i + 3] == 10 {
      return i
    }
    return nil
  }

  private func respond(to head: ArraySlice<UInt8>) {
    guard let request = HTTPRequestHead(head) else {
      answer(HTTPResponse(status: 400, body: "malformed request\n"))
      return
    }
    guard request.method == "GET" || request.method == "HEAD" else {
      answer(HTTPResponse(status: 405, headers: [("Allow", "GET, HEAD")], body: "only GET\n"))
      return
    }
    guard let route = routes[request.path] else {
      answer(HTTPResponse(status: 404, body: "not found\n"))
      return
    }
    var response = route()
    if request.method == "HEAD" { response.body = [] }
    answer(response)
  }

  private func answer(_ response: HTTPResponse) {
    responding = true
    output = response.serialized()
    loop.modify(fd: fd, registration: registration, events: [.writable])
    writeOut()
  }

  private func writeOut() {
    while written < output.count {
      let n = output.withUnsafeBytes { raw in
        send(fd, raw.baseAddress.map { $0 + written }, output.count - written, Int32(MSG_NOSIGNAL))
      }
      if n > 0 {
        written += n
        continue
      }
      if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return }
      if n < 0 && errno == EINTR { continue }
      finish()
      return
    }
    linger()
  }

  /// After the response: end the write side and read (discarding) until the client
  /// closes, at most a second, so that unread request bytes (a body, the rest of an
  /// oversize head) do not turn the close into a reset that loses the response.
  private func linger() {
    lingering = true
    _ = Glibc.shutdown(fd, Int32(SHUT_WR))
    loop.modify(fd: fd, registration: registration, events: [.readable])
    if let timer { loop.cancelTimer(timer) }
    timer = loop.schedule(afterNanos: 1_000_000_000) { [weak self] in self?.finish() }
    drainUntilClosed()
  }

  private func drainUntilClosed() {
    let buffer = loop.scratch
    while true {
      let n = read(fd, buffer.baseAddress, buffer.count)
      if n > 0 { continue }
      if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return }
      if n < 0 && errno == EINTR { continue }
      finish()
      return
    }
  }

  func finish() {
    guard !done else { return }
    done = true
    if let timer { loop.cancelTimer(timer) }
    if registration != 0 { loop.deregister(fd: fd, registration: registration) }
    _ = Glibc.shutdown(fd, Int32(SHUT_WR))
    Socket.close(fd)
    onFinish(self)
  }
}
