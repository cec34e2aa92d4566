import CShims
import Glibc

/// Hears that a TLS stream's handshake is done (the ALPN choice is known), on the
/// stream's loop thread, before any of its bytes are delivered.
public protocol TLSHandshakeDelegate: AnyObject {
  func connectionDidHandshake(_ connection: TLSConnection)
}

/// A TLS connection: the stream core over OpenSSL's records (`init(fd:context:...)`).
public typealias TLSConnection = SocketStream
/// A plain TCP connection: the stream core over plaintext (`init(fd:loop:peer:)`), for
/// the development listener that speaks HTTP without TLS.
public typealias PlainConnection = SocketStream

/// One non-blocking socket driven by an `EventLoop`, seen as a stream of bytes: the
/// handshake of its record layer, then bytes in (to `delegate`) and buffered bytes out.
/// It knows nothing of what the bytes mean: the owner (native frames, HTTP/1.1, HTTP/2)
/// decodes them. It is the one place that owns the descriptor, its epoll interest, the
/// output queue and its watermarks, the read budget, the linger and the close, for TLS
/// and plaintext alike (`RecordLayer`), so what it does for fairness and safety it does
/// for every owner: a read budget per turn of the loop, reads paused while queued output
/// is over `outputHighWater` (and a drain event when it falls under `outputLowWater`),
/// and the owner's own per-turn budget (`ByteStreamDelegate.streamDeliverBuffered`).
/// Everything here runs on the loop's thread.
public final class SocketStream: EventHandler, ByteStream {
  public enum State: Sendable {
    case connecting, handshaking, open, closing, closed
  }

  public let loop: EventLoop
  public let peer: SocketAddress?
  public private(set) var state: State
  /// Gets the bytes and the close. An owner that hands the connection to another
  /// transport (the ALPN choice) replaces it.
  public weak var delegate: (any ByteStreamDelegate)?
  /// Hears the end of a TLS handshake.
  public weak var handshakeDelegate: (any TLSHandshakeDelegate)?
  /// Set by an owner that wants no more input for now (a request in flight). Input is
  /// still watched until some arrives while held (`heldInputArrived`): a peer that waits
  /// for its answer, as an HTTP/1.1 client does, costs no change of epoll interest to
  /// hold and release, and no read on release when nothing came meanwhile.
  public var readingHeld = false {
    didSet {
      guard oldValue != readingHeld, state == .open else { return }
      if !readingHeld {
        // Input that came while held, or that the record layer already holds, is read on
        // the next iteration; input yet to come wakes the loop as usual.
        if heldInputArrived || records.hasBufferedInput { yieldTurn() }
        heldInputArrived = false
      }
      updateInterest()
    }
  }
  /// Set when the socket became readable while reading was held: its read interest is
  /// dropped then (level-triggered input would wake the loop for ever), and only the
  /// peer's leaving is watched until the owner reads again.
  private var heldInputArrived = false
  /// Told the bytes still queued for the peer whenever that changes after a write (and
  /// 0 at the close): output the peer has not taken is charged by the owner to its
  /// byte budgets. An answer written at once is never reported, so the usual path costs
  /// nothing.
  public var queuedOutputObserver: ((Int) -> Void)?
  private var reportedQueuedBytes = 0

  /// Monotonic time of the last bytes in or out: the idle timeout counts from it.
  public private(set) var lastActivity: UInt64
  /// When the handshake (or the TCP connect) began.
  public let startedAt: UInt64
  private let isServer: Bool

  private let fd: Int32
  private let records: any RecordLayer
  private var registration: UInt64 = 0
  private var output: [UInt8] = []
  private var outputIndex = 0
  private var interestWritable = false
  private var interestReadable = true
  /// The record layer asked to be called when the socket is writable (TLS may need to
  /// write to read).
  private var recordsWantWritable = false
  private var lingerTimer: UInt64?
  private var flushScheduled = false

  /// Set while queued output is over `outputHighWater`: the connection then reads nothing
  /// (and its owner decodes nothing) until the peer has taken enough to bring it under
  /// `outputLowWater`.
  public private(set) var readPaused = false
  /// Set while a yielded turn waits in the loop's next iteration.
  private var continuationScheduled = false

  /// How long a closing connection waits for the peer's end before it is cut.
  public static let lingerNanos: UInt64 = 2_000_000_000
  /// How much a closing connection reads and drops while it waits: enough for the bytes
  /// a peer had in flight when the last reply left, so that it reads that reply instead
  /// of losing it to a reset. A peer still sending past this is not listening (one that
  /// pipelined 150 calls of 1 MiB kept the loop decrypting for the whole linger), and is
  /// cut.
  public static let lingerBudgetBytes = 1 << 20
  private var lingerBytes = 0
  /// Queued output above which the connection stops reading: a peer that sends calls or
  /// Pings and never reads the answers holds at most this much (plus the replies of the
  /// calls already in flight) instead of growing the process without limit.
  public static let outputHighWater = 1 << 20
  /// Queued output under which a paused connection reads again.
  public static let outputLowWater = 256 * 1024
  /// Bytes one connection may read in one turn of the loop before it yields, unless its
  /// owner sets a smaller `readBudgetBytes`.
  public static let defaultReadBudgetBytes = 256 * 1024
  /// Bytes this connection may read in one turn of the loop before it yields: what every
  /// other connection of the loop may wait behind. Owners whose bytes cost more to decode
  /// set less (HTTP/2: `HTTP2SessionLimits.readBudgetBytes`).
  public var readBudgetBytes = SocketStream.defaultReadBudgetBytes
  /// Served after the loop's other connections: its events only schedule its turn among
  /// the loop's yielded work (`EventLoop.runOnNextIteration`), which runs after the next
  /// iteration's events and within that iteration's time budget. Set for a peer that
  /// abused the server (an address paying off a penalty, a connection whose streams were
  /// refused), so that what it makes the loop do is what the loop has left over.
  public var deprioritized = false

  /// A TLS connection over an accepted or connecting socket. Takes ownership of `fd`.
  /// - Parameter serverName: for clients, the name or IP the certificate must match.
  public convenience init(
    fd: Int32, context: TLSContext, loop: EventLoop, peer: SocketAddress?,
    connecting: Bool = false, serverName: String? = nil
  ) throws(OpenSSLError) {
    let records: TLSRecords
    do {
      records = try TLSRecords(fd: fd, context: context, serverName: serverName)
    } catch {
      Socket.close(fd)
      throw error
    }
    self.init(
      fd: fd, records: records, loop: loop, peer: peer, state: connecting ? .connecting : .handshaking,
      isServer: context.isServer)
  }

  /// A plaintext connection over an accepted socket (open at once). Takes ownership of
  /// `fd`.
  public convenience init(fd: Int32, loop: EventLoop, peer: SocketAddress?) {
    self.init(fd: fd, records: PlainRecords(fd: fd), loop: loop, peer: peer, state: .open, isServer: true)
  }

  private init(
    fd: Int32, records: any RecordLayer, loop: EventLoop, peer: SocketAddress?, state: State, isServer: Bool
  ) {
    self.fd = fd
    self.records = records
    self.loop = loop
    self.peer = peer
    self.state = state
    self.isServer = isServer
    let now = MonotonicClock.now()
    startedAt = now
    lastActivity = now
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

  /// The negotiated ALPN protocol, or nil when the peer offered none (or on plaintext).
  public var negotiatedProtocol: String? { records.negotiatedProtocol }

  /// The common name of the client certificate the peer presented and the server's
  /// client CAs verified (mutual TLS); nil when there was none. Known at the handshake.
  public var verifiedPeerName: String? { records.verifiedPeerName }

  public var isOpen: Bool { state == .open }

  /// Whether the queued output has not yet all reached the socket.
  public var hasPendingOutput: Bool { outputIndex < output.count }

  /// Bytes queued and not yet handed to the record layer.
  public var pendingOutputBytes: Int { output.count - outputIndex }

  // MARK: Writing

  /// Queues bytes; they are written at the end of the loop's iteration, together with
  /// everything else queued in it. A client may queue before the handshake is done
  /// (they go out once it is).
  public func send(bytes: [UInt8]) {
    guard state == .open || state == .handshaking || state == .connecting else { return }
    // Nothing queued (the usual case): the caller's buffer becomes the queue, no copy.
    if output.isEmpty { output = bytes } else { output.append(contentsOf: bytes) }
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

  /// Sends what is queued, then ends the write side (TLS's close_notify, then TCP's),
  /// and closes once the peer has closed too (or after `lingerNanos`), so the last bytes
  /// (a `GoAway`) are read by the peer rather than lost to a reset.
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
      if deprioritized || continuationScheduled {
        yieldTurn()
        return
      }
      handshake()
    case .open:
      if readingHeld && !events.isDisjoint(with: [.hangup, .error, .readHangup]) {
        // The peer left while its request was served (input is not read while held,
        // and a dead socket would wake the loop for ever): closing cancels the request.
        finishClose(error: nil)
        return
      }
      if readingHeld && events.contains(.readable) && !heldInputArrived {
        heldInputArrived = true
        updateInterest()
      }
      // A turn already yielded does this connection's work when it runs: reading here
      // too would give the connection two budgets in one iteration.
      if deprioritized || continuationScheduled {
        yieldTurn()
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
      case .handshaking: handshake()
      case .open: serviceOpen()
      case .closing:
        drainWhileClosing()
        updateInterest()
      default: break
      }
    }
  }

  private func handshake() {
    switch records.handshake() {
    case .transferred:
      state = .open
      lastActivity = MonotonicClock.now()
      handshakeDelegate?.connectionDidHandshake(self)
      guard state == .open else { return }
      flush()
      readAvailable()
      updateInterest()
    case .wantRead:
      recordsWantWritable = false
      updateInterest()
    case .wantWrite:
      recordsWantWritable = true
      updateInterest()
    case .closed:
      failHandshake(OpenSSLError("TLS handshake"))
    case .failed(let error):
      failHandshake(error)
    }
  }

  /// Lets the owner deliver what it already decoded, then reads more, until the record
  /// layer has nothing more, the output is over its cap (reading resumes when the peer
  /// reads), the owner holds reading, or this turn's budget (bytes, or the owner's
  /// units) is spent (the rest runs on the loop's next iteration).
  private func readAvailable() {
    let buffer = loop.scratch
    var bytesRead = 0
    var delivered = 0
    while state == .open {
      if readPaused || readingHeld { return }
      if let delegate, !delegate.streamDeliverBuffered(self, delivered: &delivered) {
        if state == .open && !readPaused && !readingHeld { yieldTurn() }
        return
      }
      if bytesRead >= readBudgetBytes {
        yieldTurn()
        return
      }
      // No read past the budget: a turn delivers at most `readBudgetBytes`.
      let room = min(buffer.count, readBudgetBytes - bytesRead)
      let result = records.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<room]))
      switch result {
      case .transferred(let n):
        bytesRead += n
        lastActivity = MonotonicClock.now()
        delegate?.stream(self, didReceive: UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
      case .wantRead:
        recordsWantWritable = false
        return
      case .wantWrite:
        recordsWantWritable = true
        return
      case .closed, .failed:
        finishClose(after: result)
        return
      }
    }
  }

  private func flush() {
    guard state == .open || state == .closing else { return }
    while outputIndex < output.count {
      let result = output.withUnsafeBytes { raw in
        records.write(UnsafeRawBufferPointer(rebasing: raw[outputIndex...]))
      }
      switch result {
      case .transferred(let n):
        outputIndex += n
        continue
      case .wantWrite:
        recordsWantWritable = true
        compactOutput()
        reportQueued()
        return
      case .wantRead:
        return
      case .closed, .failed:
        finishClose(after: result)
        return
      }
    }
    // All written: give the memory back, idle connections hold no buffers. A "want
    // writable" that a read reported stays until a write has actually gone through.
    if !output.isEmpty { recordsWantWritable = false }
    output = []
    outputIndex = 0
    reportQueued()
    resumeIfDrained()
  }

  private func reportQueued() {
    let queued = state == .closed ? 0 : pendingOutputBytes
    guard queued != reportedQueuedBytes else { return }
    reportedQueuedBytes = queued
    queuedOutputObserver?(queued)
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
  /// the record layer or the owner already holds is picked up on the next iteration.
  /// The owner hears of it then too, not from inside `flush`, so what it sends in
  /// answer is queued after this write has finished.
  private func resumeIfDrained() {
    guard readPaused, pendingOutputBytes <= Self.outputLowWater else { return }
    readPaused = false
    guard state == .open else { return }
    yieldTurn()
    loop.runOnNextIteration { [weak self] in
      guard let self, self.state == .open else { return }
      self.delegate?.streamOutputDrained(self)
    }
  }

  /// Set when a server's handshake failed: the alert is on its way and TLS is done.
  private var handshakeError: (any Error)?

  /// A server whose handshake failed has written its alert (unknown CA, no shared
  /// cipher...); closing at once could turn it into a reset that destroys the alert
  /// before the client reads it, if the client's next bytes are unread here. So the
  /// write side is ended and input is discarded until the client closes, or for at most
  /// `lingerNanos`. A client reports the failure at once.
  private func failHandshake(_ error: any Error) {
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
    recordsWantWritable = false
    drainWhileClosing()
    updateInterest()
  }

  private var wroteShutdown = false

  private func shutdownWrite() {
    guard !wroteShutdown else { return }
    wroteShutdown = true
    records.shutdownWrite()
  }

  /// Reads and drops what the peer still sends while closing, within the linger's
  /// budget; closes at the peer's end.
  private func drainWhileClosing() {
    guard state == .closing else { return }
    if let handshakeError {
      discardRawInput(then: handshakeError)
      return
    }
    let buffer = loop.scratch
    var bytesRead = 0
    while true {
      if lingerBytes >= Self.lingerBudgetBytes {
        finishClose(error: nil)
        return
      }
      if bytesRead >= readBudgetBytes {
        yieldTurn()
        return
      }
      switch records.read(into: buffer) {
      case .transferred(let n):
        bytesRead += n
        lingerBytes += n
      case .wantRead, .wantWrite:
        return
      case .closed, .failed:
        finishClose(error: nil)
        return
      }
    }
  }

  /// Reads and drops what the socket holds after a failed handshake; closes at EOF.
  private func discardRawInput(then error: any Error) {
    let buffer = loop.scratch
    var bytesRead = 0
    while bytesRead < readBudgetBytes {
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
    let wantWritable = state == .connecting || recordsWantWritable || (canWriteOutput && hasPendingOutput)
    // Paused for backpressure: watch for writability only, so the peer's further input
    // waits in the kernel (and, once that fills, in the peer) instead of in memory here.
    // Held by the owner: not watched at all (level-triggered input would spin).
    let wantReadable =
      !(readPaused && state == .open && wantWritable) && !(readingHeld && heldInputArrived && state == .open)
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

  /// Closes after a read or write found the connection ended: the peer's orderly close
  /// (no error) or a failure (its error).
  private func finishClose(after result: RecordIO) {
    if case .failed(let error) = result {
      finishClose(error: error)
    } else {
      finishClose(error: nil)
    }
  }

  private func finishClose(error: (any Error)?, registered: Bool = true) {
    guard state != .closed else { return }
    state = .closed
    if let lingerTimer { loop.cancelTimer(lingerTimer) }
    if registered, registration != 0 { loop.deregister(fd: fd, registration: registration) }
    records.release()
    Socket.close(fd)
    output = []
    outputIndex = 0
    reportQueued()
    queuedOutputObserver = nil
    delegate?.streamDidClose(self, error: error)
  }
}
