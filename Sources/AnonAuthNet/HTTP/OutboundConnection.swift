import COpenSSL
import CShims
import Glibc

/// One outbound TLS connection for a single request, driven synchronously on an I/O
/// thread: a non-blocking socket and `poll` so that every step (connect, handshake,
/// write, read) stops at the request's deadline. The certificate must chain to the
/// context's CAs and name the host (SNI and `SSL_set1_host`).
final class OutboundConnection {
  private let fd: Int32
  /// Internal, not private: a kept-alive connection reads the negotiated ALPN from it.
  let ssl: OpaquePointer
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
    ERR_clear_error()
    guard let ssl = SSL_new(context.ctx) else {
      Socket.close(fd)
      throw .tls(host: host, detail: OpenSSLError("SSL_new").description)
    }
    self.fd = fd
    self.ssl = ssl
    SSL_set_fd(ssl, fd)
    SSL_set_connect_state(ssl)
    var probe = in6_addr()
    if inet_pton(AF_INET, host, &probe) == 1 || inet_pton(AF_INET6, host, &probe) == 1 {
      X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host)
    } else {
      _ = anonauth_ssl_set_tlsext_host_name(ssl, host)
      SSL_set1_host(ssl, host)
    }
    try drive("TLS handshake") { SSL_connect($0) }
  }

  deinit {
    ERR_clear_error()
    SSL_free(ssl)
    Socket.close(fd)
  }

  /// Writes all of `bytes`.
  func write(_ bytes: [UInt8]) throws(HTTPClientError) {
    var offset = 0
    while offset < bytes.count {
      let n = try drive("TLS write") { ssl in
        bytes.withUnsafeBytes { raw in
          SSL_write(ssl, raw.baseAddress.map { $0 + offset }, Int32(min(bytes.count - offset, 1 << 20)))
        }
      }
      offset += Int(n)
    }
  }

  /// Reads some bytes into `buffer`; 0 at the end of the stream (a clean close_notify,
  /// or a peer that just closed the socket: the HTTP framing decides if that was early).
  func read(into buffer: UnsafeMutableRawBufferPointer) throws(HTTPClientError) -> Int {
    do {
      return Int(try drive("TLS read") { SSL_read($0, buffer.baseAddress, Int32(buffer.count)) })
    } catch .io {
      return 0
    }
  }

  /// Runs an SSL call until it succeeds, polling for whatever it wants, up to the deadline.
  @discardableResult
  private func drive(_ what: String, _ call: (OpaquePointer) -> Int32) throws(HTTPClientError) -> Int32 {
    while true {
      ERR_clear_error()
      let rc = call(ssl)
      if rc > 0 { return rc }
      let error = SSL_get_error(ssl, rc)
      switch error {
      case SSL_ERROR_WANT_READ:
        try wait(for: Int16(POLLIN))
      case SSL_ERROR_WANT_WRITE:
        try wait(for: Int16(POLLOUT))
      case SSL_ERROR_ZERO_RETURN:
        return 0
      case SSL_ERROR_SYSCALL:
        throw .io(host: host, detail: "\(what): connection closed")
      default:
        let detail = OpenSSLError(what).description
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

  /// A connected non-blocking socket, or nil when this address refused or timed out.
  private static func connect(_ address: SocketAddress, deadline: ContinuousClock.Instant) -> Int32? {
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
