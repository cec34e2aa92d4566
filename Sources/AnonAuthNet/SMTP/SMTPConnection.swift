import COpenSSL
import CShims
import Glibc

/// One connection to a mail server, driven synchronously on a thread of its own: a
/// non-blocking socket and `poll`, so every step stops at the deadline. It starts in
/// plain text (for STARTTLS) or in TLS, and `startTLS` turns a plain one into TLS with
/// the same certificate and host-name checks as every outbound connection.
final class SMTPConnection {
  private let fd: Int32
  private var ssl: OpaquePointer?
  private let host: String
  let deadline: ContinuousClock.Instant
  private var parser = SMTPReplyParser()

  init(host: String, port: UInt16, deadline: ContinuousClock.Instant) throws(SMTPError) {
    self.host = host
    self.deadline = deadline
    let addresses: [SocketAddress]
    do {
      addresses = try HostResolver.resolve(host: host, port: port)
    } catch {
      throw .temporary("cannot resolve \(host)")
    }
    for address in addresses {
      if let fd = OutboundConnection.connect(address, deadline: deadline) {
        self.fd = fd
        return
      }
      if ContinuousClock.now >= deadline { break }
    }
    throw .temporary("cannot connect to \(host):\(port)")
  }

  deinit {
    if let ssl {
      ERR_clear_error()
      SSL_free(ssl)
    }
    Socket.close(fd)
  }

  var isTLS: Bool { ssl != nil }

  /// The TLS handshake on this socket: the certificate must chain to the context's CAs
  /// and name the host.
  func startTLS(_ context: TLSContext) throws(SMTPError) {
    ERR_clear_error()
    guard let ssl = SSL_new(context.ctx) else { throw .temporary(OpenSSLError("SSL_new").description) }
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
    try drive(ssl, "TLS handshake") { SSL_connect($0) }
  }

  /// Writes all of `bytes`.
  func write(_ bytes: [UInt8]) throws(SMTPError) {
    var offset = 0
    while offset < bytes.count {
      let chunk = Int32(min(bytes.count - offset, 1 << 20))
      if let ssl {
        let n = try drive(ssl, "TLS write") { ssl in
          bytes.withUnsafeBytes { SSL_write(ssl, $0.baseAddress.map { $0 + offset }, chunk) }
        }
        offset += Int(n)
      } else {
        let n = bytes.withUnsafeBytes {
          Glibc.send(fd, $0.baseAddress.map { $0 + offset }, Int(chunk), Int32(MSG_NOSIGNAL))
        }
        if n > 0 {
          offset += n
        } else {
          let errno = anonauth_errno()
          guard n < 0, errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR else {
            throw .temporary("connection to \(host) broke while writing")
          }
          try wait(for: Int16(POLLOUT))
        }
      }
    }
  }

  /// Reads until one whole reply has arrived.
  func readReply() throws(SMTPError) -> SMTPReply {
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
      do {
        if let reply = try parser.next() { return reply }
      } catch {
        throw .protocolError("\(host) sent a malformed reply: \(error)")
      }
      let n = try readSome(into: &buffer)
      if n == 0 { throw .temporary("\(host) closed the connection") }
      parser.append(buffer[0..<n])
    }
  }

  private func readSome(into buffer: inout [UInt8]) throws(SMTPError) -> Int {
    let count = buffer.count
    if let ssl {
      return Int(
        try drive(ssl, "TLS read") { ssl in
          buffer.withUnsafeMutableBytes { SSL_read(ssl, $0.baseAddress, Int32(count)) }
        })
    }
    while true {
      let n = buffer.withUnsafeMutableBytes { Glibc.recv(fd, $0.baseAddress, count, 0) }
      if n >= 0 { return n }
      let errno = anonauth_errno()
      guard errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR else {
        throw .temporary("connection to \(host) broke while reading")
      }
      try wait(for: Int16(POLLIN))
    }
  }

  /// Runs an SSL call until it succeeds, polling for whatever it wants, up to the deadline.
  @discardableResult
  private func drive(_ ssl: OpaquePointer, _ what: String, _ call: (OpaquePointer) -> Int32) throws(SMTPError)
    -> Int32
  {
    while true {
      ERR_clear_error()
      let rc = call(ssl)
      if rc > 0 { return rc }
      switch SSL_get_error(ssl, rc) {
      case SSL_ERROR_WANT_READ: try wait(for: Int16(POLLIN))
      case SSL_ERROR_WANT_WRITE: try wait(for: Int16(POLLOUT))
      case SSL_ERROR_ZERO_RETURN: return 0
      case SSL_ERROR_SYSCALL: throw .temporary("\(what) with \(host): connection closed")
      default: throw .temporary("\(what) with \(host) failed: \(OpenSSLError(what).description)")
      }
    }
  }

  private func wait(for events: Int16) throws(SMTPError) {
    while true {
      let timeoutMs = OutboundConnection.remainingMs(deadline)
      guard timeoutMs > 0 else { throw .temporary("\(host) did not answer in time") }
      var pfd = pollfd(fd: fd, events: events, revents: 0)
      let rc = poll(&pfd, 1, timeoutMs)
      if rc > 0 { return }
      if rc == 0 { throw .temporary("\(host) did not answer in time") }
      if anonauth_errno() != EINTR { throw .temporary("poll failed") }
    }
  }
}

/// Why a mail did not go: `permanent` for a 5xx answer (the same mail will never be
/// taken), otherwise worth another try later.
public enum SMTPError: Error, Sendable, Equatable, CustomStringConvertible {
  case temporary(String)
  case permanent(String)
  /// The server broke the protocol: tried again later (it may be fixed).
  case protocolError(String)

  public var isPermanent: Bool { if case .permanent = self { true } else { false } }

  public var description: String {
    switch self {
    case .temporary(let s), .permanent(let s), .protocolError(let s): s
    }
  }
}
