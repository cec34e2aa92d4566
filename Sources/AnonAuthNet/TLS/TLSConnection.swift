import COpenSSL
import CShims
import Glibc

/// Hears that a `TLSConnection`'s handshake is done (the ALPN choice is known), on the
/// connection's loop thread, before any of its bytes are delivered.
public protocol TLSHandshakeDelegate: AnyObject {
  func connectionDidHandshake(_ connection: TLSConnection)
}

/// One non-blocking TLS connection driven by an `EventLoop`: the handshake, then
/// decrypted bytes in (to `delegate`) and buffered bytes out. It knows nothing of what
/// the bytes mean: the owner (native frames, HTTP/1.1, HTTP/2) decodes them. What it does
/// for fairness and safety it does for every owner: a read budget per turn of the loop,
/// reads paused while queued output is over `outputHighWater`, and the owner's own
/// per-turn budget (`ByteStreamDelegate.streamDeliverBuffered`). Everything here runs on
/// the loop's thread.
public final class TLSConnection: EventHandler, ByteStream {
  public enum State: Sendable {
    case connecting, handshaking, open, closing, closed
  }

  public let loop: EventLoop
  public let peer: SocketAddress?
  public private(set) var state: State
  /// Gets the decrypted bytes and the close. An owner that hands the connection to
  /// another transport (the ALPN choice) replaces it.
  public weak var delegate: (any ByteStreamDelegate)?
  /// Hears the end of the handshake.
  public weak var handshakeDelegate: (any TLSHandshakeDelegate)?
  /// Set by an owner that wants no more input for now (a request in flight).
  public var readingHeld = false {
    didSet {
      guard oldValue != readingHeld, state == .open else { return }
      if !readingHeld { yieldTurn() }
      updateInterest()
    }
  }
  /// Monotonic time of the last bytes in or out: the idle timeout counts from it.
  public private(set) var lastActivity: UInt64
  /// When the handshake (or the TCP connect) began.
  public let startedAt: UInt64
  private let isServer: Bool

  private let fd: Int32
  private var ssl: OpaquePointer?
  private var registration: UInt64 = 0
  private var output: [UInt8] = []
  private var outputIndex = 0
  private var interestWritable = false
  private var interestReadable = true
  private var sslWantsWritable = false
  private var lingerTimer: UInt64?

  /// Set while queued output is over `outputHighWater`: the connection then reads nothing
  /// (and its owner decodes nothing) until the peer has taken enough to bring it under
  /// `outputLowWater`.
  public private(set) var readPaused = false
  /// Set while a yielded turn waits in the loop's next iteration.
  private var continuationScheduled = false

  /// How long a closing connection waits for the peer's end before it is cut.
  public static let lingerNanos: UInt64 = 2_000_000_000
  /// How much a closing connection decrypts and drops while it waits: enough for the
  /// bytes a peer had in flight when the last reply left, so that it reads that reply
  /// instead of losing it to a reset. A peer still sending past this is not listening
  /// (one that pipelined 150 calls of 1 MiB kept the loop decrypting for the whole
  /// linger), and is cut.
  public static let lingerBudgetBytes = 1 << 20
  private var lingerBytes = 0
  /// Queued output above which the connection stops reading: a peer that sends calls or
  /// Pings and never reads the answers holds at most this much (plus the replies of the
  /// calls already in flight) instead of growing the process without limit.
  public static let outputHighWater = 1 << 20
  /// Queued output under which a paused connection reads again.
  public static let outputLowWater = 256 * 1024
  /// Bytes one connection may read in one turn of the loop before it yields.
  public static let readBudgetBytes = 256 * 1024

  /// A connection over an accepted or connecting socket. Takes ownership of `fd`.
  /// - Parameter serverName: for clients, the name or IP the certificate must match.
  public init(
    fd: Int32, context: TLSContext, loop: EventLoop, peer: SocketAddress?,
    connecting: Bool = false, serverName: String? = nil
  ) throws(OpenSSLError) {
    self.fd = fd
    self.loop = loop
    self.peer = peer
    self.state = connecting ? .connecting : .handshaking
    self.isServer = context.isServer
    let now = MonotonicClock.now()
    self.startedAt = now
    self.lastActivity = now
    ERR_clear_error()
    guard let ssl = SSL_new(context.ctx) else {
      Socket.close(fd)
      throw OpenSSLError("SSL_new")
    }
    self.ssl = ssl
    SSL_set_fd(ssl, fd)
    if context.isServer {
      SSL_set_accept_state(ssl)
    } else {
      SSL_set_connect_state(ssl)
      if let serverName {
        var probe = in6_addr()
        let isIP =
          inet_pton(AF_INET, serverName, &probe) == 1 || inet_pton(AF_INET6, serverName, &probe) == 1
        if isIP {
          X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), serverName)
        } else {
          _ = anonauth_ssl_set_tlsext_host_name(ssl, serverName)
          SSL_set1_host(ssl, serverName)
        }
      }
    }
  }

  deinit {
    if let ssl { SSL_free(ssl) }
  }

  /// Registers with the loop and begins; call on the loop thread.
  public func start() {
    do {
      let events: IOEvents = state == .connecting ? [.writable] : [.readable]
      interestWritable = state == .connecting
      registration = try loop.register(fd: fd, events: events, handler: self)
    } catch {
      finishClose(error: error, registered: false)
      return
    }
    if state == .handshaking { handshake() }
  }

  /// The negotiated ALPN protocol, or nil when the peer offered none.
  public var negotiatedProtocol: String? {
    guard let ssl else { return nil }
    var data: UnsafePointer<UInt8>?
    var len: UInt32 = 0
    anonauth_ssl_get_alpn(ssl, &data, &len)
    guard let data, len > 0 else { return nil }
    return String(decoding: UnsafeBufferPointer(start: data, count: Int(len)), as: UTF8.self)
  }

  /// The common name of the client certificate the peer presented and the server's
  /// client CAs verified (mutual TLS); nil when there was none. Set at the handshake.
  public private(set) var verifiedPeerName: String?

  private func readVerifiedPeerName() {
    guard let ssl, SSL_get_verify_result(ssl) == X509_V_OK,
      let certificate = SSL_get0_peer_certificate(ssl), let subject = X509_get_subject_name(certificate)
    else { return }
    var buffer = [CChar](repeating: 0, count: 256)
    let length = X509_NAME_get_text_by_NID(subject, NID_commonName, &buffer, Int32(buffer.count))
    verifiedPeerName = length > 0 ? CString.decode(buffer) : ""
  }

  public var isOpen: Bool { state == .open }

  /// Whether the queued output has not yet all reached the socket.
  public var hasPendingOutput: Bool { outputIndex < output.count }

  /// Bytes queued and not yet handed to TLS.
  public var pendingOutputBytes: Int { output.count - outputIndex }

  // MARK: Writing

  /// Queues bytes; they are written at the end of the loop's iteration, together with
  /// everything else queued in it. A client may queue before the handshake is done
  /// (they go out once it is).
  public func send(bytes: [UInt8]) {
    guard state == .open || state == .handshaking || state == .connecting else { return }
    if output.isEmpty { output.reserveCapacity(bytes.count) }
    output.append(contentsOf: bytes)
    queued()
  }

  private func queued() {
    lastActivity = MonotonicClock.now()
    if pendingOutputBytes > Self.outputHighWater { readPaused = true }
    guard !flushScheduled else { return }
    flushScheduled = true
    loop.atEndOfIteration { [self] in
      flushScheduled = false
      guard state == .open else { return }
      flush()
      updateInterest()
    }
  }

  private var flushScheduled = false

  /// Sends what is queued, then ends TLS and the TCP write side, and closes once the
  /// peer has closed too (or after `lingerNanos`), so the last bytes (a `GoAway`) are read
  /// by the peer rather than lost to a reset.
  public func closeGracefully() {
    switch state {
    case .closed, .closing: return
    case .connecting:
      finishClose(error: nil)
      return
    case .handshaking, .open:
      break
    }
    state = .closing
    lingerTimer = loop.schedule(afterNanos: Self.lingerNanos) { [weak self] in
      self?.finishClose(error: nil)
    }
    flush()
    if !hasPendingOutput { shutdownWrite() }
    updateInterest()
  }

  /// Closes at once; queued output is dropped.
  public func close(error: (any Error)? = nil) {
    finishClose(error: error)
  }

  // MARK: Events

  public func handleEvents(_ events: IOEvents) {
    switch state {
    case .closed: return
    case .connecting:
      let err = Socket.pendingError(fd)
      if err != 0 {
        finishClose(error: SystemError("connect", errno: err))
        return
      }
      state = .handshaking
      handshake()
    case .handshaking:
      handshake()
    case .open:
      if readingHeld && !events.isDisjoint(with: [.hangup, .error, .readHangup]) {
        // The peer left while its request was served (input is not read while held,
        // and a dead socket would wake the loop for ever): closing cancels the request.
        finishClose(error: nil)
        return
      }
      serviceOpen()
    case .closing:
      flush()
      if !hasPendingOutput { shutdownWrite() }
      drainWhileClosing()
      updateInterest()
    }
  }

  /// One turn of an open connection: read and deliver within the budget, write.
  private func serviceOpen() {
    readAvailable()
    if state == .open || state == .closing { flush() }
    updateInterest()
  }

  /// Gives the rest of this connection's work to the loop's next iteration.
  private func yieldTurn() {
    guard !continuationScheduled else { return }
    continuationScheduled = true
    loop.runOnNextIteration { [self] in
      continuationScheduled = false
      switch state {
      case .open: serviceOpen()
      case .closing:
        drainWhileClosing()
        updateInterest()
      default: break
      }
    }
  }

  private func handshake() {
    guard let ssl else { return }
    ERR_clear_error()
    let rc = SSL_do_handshake(ssl)
    if rc == 1 {
      state = .open
      lastActivity = MonotonicClock.now()
      readVerifiedPeerName()
      handshakeDelegate?.connectionDidHandshake(self)
      guard state == .open else { return }
      flush()
      readAvailable()
      updateInterest()
      return
    }
    switch SSL_get_error(ssl, rc) {
    case SSL_ERROR_WANT_READ:
      sslWantsWritable = false
      updateInterest()
    case SSL_ERROR_WANT_WRITE:
      sslWantsWritable = true
      updateInterest()
    default:
      failHandshake(OpenSSLError("TLS handshake"))
    }
  }

  /// Lets the owner deliver what it already decoded, then reads more, until TLS has
  /// nothing more, the output is over its cap (reading resumes when the peer reads), the
  /// owner holds reading, or this turn's budget (bytes, or the owner's units) is spent
  /// (the rest runs on the loop's next iteration).
  private func readAvailable() {
    guard let ssl else { return }
    let buffer = loop.scratch
    var bytesRead = 0
    var delivered = 0
    while state == .open {
      if readPaused || readingHeld { return }
      if let delegate, !delegate.streamDeliverBuffered(self, delivered: &delivered) {
        if state == .open && !readPaused && !readingHeld { yieldTurn() }
        return
      }
      if bytesRead >= Self.readBudgetBytes {
        yieldTurn()
        return
      }
      ERR_clear_error()
      let n = SSL_read(ssl, buffer.baseAddress, Int32(buffer.count))
      if n > 0 {
        bytesRead += Int(n)
        lastActivity = MonotonicClock.now()
        delegate?.stream(self, didReceive: UnsafeRawBufferPointer(rebasing: buffer[0..<Int(n)]))
        continue
      }
      switch SSL_get_error(ssl, n) {
      case SSL_ERROR_WANT_READ:
        sslWantsWritable = false
        return
      case SSL_ERROR_WANT_WRITE:
        sslWantsWritable = true
        return
      case SSL_ERROR_ZERO_RETURN:
        finishClose(error: nil)
        return
      default:
        finishClose(error: OpenSSLError("TLS read"))
        return
      }
    }
  }

  private func flush() {
    guard let ssl, state == .open || state == .closing else { return }
    while outputIndex < output.count {
      ERR_clear_error()
      let remaining = min(output.count - outputIndex, Int(Int32.max))
      let n = output.withUnsafeBytes { raw in
        SSL_write(ssl, raw.baseAddress.map { $0 + outputIndex }, Int32(remaining))
      }
      if n > 0 {
        outputIndex += Int(n)
        continue
      }
      switch SSL_get_error(ssl, n) {
      case SSL_ERROR_WANT_WRITE:
        sslWantsWritable = true
        compactOutput()
        return
      case SSL_ERROR_WANT_READ:
        return
      default:
        finishClose(error: OpenSSLError("TLS write"))
        return
      }
    }
    // All written: give the memory back, idle connections hold no buffers. A WANT_WRITE
    // that SSL_read reported stays until a write has actually gone through.
    if !output.isEmpty { sslWantsWritable = false }
    output = []
    outputIndex = 0
    resumeIfDrained()
  }

  /// Drops the written front of a partly written buffer once it is the larger part, so
  /// a peer that reads slowly but never lets the buffer empty does not keep it growing.
  private func compactOutput() {
    if outputIndex >= 64 * 1024 && outputIndex * 2 >= output.count {
      output.removeSubrange(0..<outputIndex)
      outputIndex = 0
    }
    resumeIfDrained()
  }

  /// Reads again once a paused connection's output is under the low watermark; what
  /// TLS or the owner already holds is picked up on the next iteration.
  private func resumeIfDrained() {
    guard readPaused, pendingOutputBytes <= Self.outputLowWater else { return }
    readPaused = false
    if state == .open {
      yieldTurn()
      notifyDrained()
    }
  }

  /// Tells the delegate on the loop's next iteration, not from inside `flush`, so what
  /// it sends in answer is queued after this write has finished.
  private func notifyDrained() {
    loop.runOnNextIteration { [weak self] in
      guard let self, self.state == .open else { return }
      self.delegate?.streamOutputDrained(self)
    }
  }

  /// Set when a server's handshake failed: the alert is on its way and TLS is done.
  private var handshakeError: OpenSSLError?

  /// A server whose handshake failed has written its alert (unknown CA, no shared
  /// cipher...); closing at once could turn it into a reset that destroys the alert
  /// before the client reads it, if the client's next bytes are unread here. So the
  /// write side is ended and input is discarded until the client closes, or for at most
  /// `lingerNanos`. A client reports the failure at once.
  private func failHandshake(_ error: OpenSSLError) {
    guard isServer, registration != 0 else {
      finishClose(error: error)
      return
    }
    handshakeError = error
    state = .closing
    wroteShutdown = true
    output = []
    outputIndex = 0
    _ = Glibc.shutdown(fd, Int32(SHUT_WR))
    lingerTimer = loop.schedule(afterNanos: Self.lingerNanos) { [weak self] in
      self?.finishClose(error: error)
    }
    sslWantsWritable = false
    drainWhileClosing()
    updateInterest()
  }

  private var wroteShutdown = false

  private func shutdownWrite() {
    guard let ssl, !wroteShutdown else { return }
    wroteShutdown = true
    ERR_clear_error()
    _ = SSL_shutdown(ssl)
    ERR_clear_error()
    _ = Glibc.shutdown(fd, Int32(SHUT_WR))
  }

  private func drainWhileClosing() {
    if let handshakeError {
      discardRawInput(then: handshakeError)
      return
    }
    guard let ssl, state == .closing else { return }
    let buffer = loop.scratch
    var bytesRead = 0
    while true {
      if lingerBytes >= Self.lingerBudgetBytes {
        finishClose(error: nil)
        return
      }
      if bytesRead >= Self.readBudgetBytes {
        yieldTurn()
        return
      }
      ERR_clear_error()
      let n = SSL_read(ssl, buffer.baseAddress, Int32(buffer.count))
      if n > 0 {
        bytesRead += Int(n)
        lingerBytes += Int(n)
        continue
      }
      let err = SSL_get_error(ssl, n)
      if err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE { return }
      finishClose(error: nil)
      return
    }
  }

  /// Reads and drops what the socket holds after a failed handshake; closes at EOF.
  private func discardRawInput(then error: OpenSSLError) {
    guard state == .closing else { return }
    let buffer = loop.scratch
    var bytesRead = 0
    while bytesRead < Self.readBudgetBytes {
      let n = Glibc.recv(fd, buffer.baseAddress, buffer.count, Int32(MSG_DONTWAIT))
      if n > 0 {
        bytesRead += n
        continue
      }
      if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) { return }
      finishClose(error: error)
      return
    }
    yieldTurn()
  }

  private func updateInterest() {
    guard state != .closed, registration != 0 else { return }
    // Output queued before the handshake is done cannot be written yet: asking for
    // EPOLLOUT then would spin (epoll is level-triggered and the socket is writable).
    let canWriteOutput = state == .open || state == .closing
    let wantWritable = state == .connecting || sslWantsWritable || (canWriteOutput && hasPendingOutput)
    // Paused for backpressure: watch for writability only, so the peer's further input
    // waits in the kernel (and, once that fills, in the peer) instead of in memory here.
    // Held by the owner: not watched at all (level-triggered input would spin).
    let wantReadable = !(readPaused && state == .open && wantWritable) && !(readingHeld && state == .open)
    if wantWritable != interestWritable || wantReadable != interestReadable {
      interestWritable = wantWritable
      interestReadable = wantReadable
      var events: IOEvents = []
      if wantReadable { events.insert(.readable) }
      if wantWritable { events.insert(.writable) }
      // While held, only the peer's leaving is watched for.
      loop.modify(
        fd: fd, registration: registration, events: events,
        watchHangup: wantReadable || (readingHeld && state == .open))
    }
  }

  private func finishClose(error: (any Error)?, registered: Bool = true) {
    guard state != .closed else { return }
    state = .closed
    if let lingerTimer { loop.cancelTimer(lingerTimer) }
    if registered, registration != 0 { loop.deregister(fd: fd, registration: registration) }
    if let ssl {
      SSL_free(ssl)
      self.ssl = nil
    }
    ERR_clear_error()
    Socket.close(fd)
    output = []
    outputIndex = 0
    delegate?.streamDidClose(self, error: error)
  }
}
