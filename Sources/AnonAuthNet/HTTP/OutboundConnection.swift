import COpenSSL
import CShims
import Glibc

/// One outbound TLS connection for a single request, driven synchronously on an I/O
/// thread: a non-blocking socket and `poll` so that every step (connect, handshake,
/// write, read) stops at the request's deadline. The bytes go through the stream core's
/// TLS record layer (`TLSRecords`), so the certificate checks (it must chain to the
/// context's CAs and name the host: SNI and `SSL_set1_host`) are the event-driven
/// clients' own; only the waiting differs (`poll` here, the event loop there).
final class OutboundConnection {
  private let fd: Int32
  private let records: TLSRecords
  private let host: String
  /// When the next step must be done by. A kept-alive connection moves it on before
  /// each request; a one-request connection keeps the one it was opened with.
  var deadline: ContinuousClock.Instant

  /// Resolves `host`, connects to the first address that answers, and completes the
  /// TLS handshake, all before `deadline`.
  init(host: String, port: UInt16, context: TLSContext, deadline: ContinuousClock.Instant)
    throws(HTTPClientError)
  {
    self.host = host
    self.deadline = deadline
    let addresses = try HostResolver.resolve(host: host, port: port)
    var connected: Int32?
    for address in addresses {
      if let fd = Self.connect(address, deadline: deadline) {
        connected = fd
        break
      }
      if ContinuousClock.now >= deadline { throw .timeout(host: host) }
    }
    guard let fd = connected else { throw .connect(host: host) }
    do {
      records = try TLSRecords(fd: fd, context: context, serverName: host)
    } catch {
      Socket.close(fd)
      throw .tls(host: host, detail: error.description)
    }
    self.fd = fd
    try drive("TLS handshake") { $0.handshake() }
  }

  deinit {
    records.release()
    Socket.close(fd)
  }

  /// Writes all of `bytes`.
  func write(_ bytes: [UInt8]) throws(HTTPClientError) {
    var offset = 0
    while offset < bytes.count {
      let n = try drive("TLS write") { records in
        bytes.withUnsafeBytes { raw in
          records.write(UnsafeRawBufferPointer(rebasing: raw[offset..<min(bytes.count, offset + (1 << 20))]))
        }
      }
      guard n > 0 else { throw .io(host: host, detail: "TLS write: connection closed") }
      offset += n
    }
  }

  /// Reads some bytes into `buffer`; 0 at the end of the stream (a clean close_notify,
  /// or a peer that just closed the socket: the HTTP framing decides if that was early).
  func read(into buffer: UnsafeMutableRawBufferPointer) throws(HTTPClientError) -> Int {
    do {
      return try drive("TLS read") { $0.read(into: buffer) }
    } catch .io {
      return 0
    }
  }

  /// Runs a record-layer step until it moves bytes (or completes), polling for whatever
  /// it wants, up to the deadline; 0 at the peer's orderly end.
  @discardableResult
  private func drive(_ what: String, _ step: (TLSRecords) -> RecordIO) throws(HTTPClientError) -> Int {
    while true {
      switch step(records) {
      case .transferred(let n): return n
      case .wantRead: try wait(for: Int16(POLLIN))
      case .wantWrite: try wait(for: Int16(POLLOUT))
      case .closed:
        if what == "TLS handshake" {
          throw .tls(host: host, detail: "\(what): the server closed the connection")
        }
        return 0
      case .failed(let error):
        let detail = "\(what): \(error)"
        if what == "TLS handshake" { throw .tls(host: host, detail: detail) }
        throw .io(host: host, detail: detail)
      }
    }
  }

  private func wait(for events: Int16) throws(HTTPClientError) {
    let timeoutMs = Self.remainingMs(deadline)
    guard timeoutMs > 0 else { throw .timeout(host: host) }
    var pfd = pollfd(fd: fd, events: events, revents: 0)
    let rc = poll(&pfd, 1, timeoutMs)
    if rc == 0 { throw .timeout(host: host) }
    if rc < 0 && anonauth_errno() != EINTR { throw .io(host: host, detail: "poll failed") }
  }

  static func remainingMs(_ deadline: ContinuousClock.Instant) -> Int32 {
    let left = deadline - ContinuousClock.now
    let ms = left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000
    return Int32(clamping: max(0, ms))
  }

  /// A connected non-blocking socket, or nil when this address refused or timed out (the
  /// mail client's connections start here too).
  static func connect(_ address: SocketAddress, deadline: ContinuousClock.Instant) -> Int32? {
    guard let fd = try? Socket.connect(to: address) else { return nil }
    var pfd = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
    while true {
      let timeoutMs = remainingMs(deadline)
      guard timeoutMs > 0 else { break }
      let rc = poll(&pfd, 1, timeoutMs)
      if rc < 0 && anonauth_errno() == EINTR { continue }
      if rc == 1 && Socket.pendingError(fd) == 0 { return fd }
      break
    }
    Socket.close(fd)
    return nil
  }
}
