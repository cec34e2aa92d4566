import CShims
import Glibc

/// A plain TCP connection as a `ByteStream`, for the development listener that speaks
/// HTTP without TLS (`--firebase-emulator-listen`, loopback only). It keeps the TLS
/// connection's bounds: reads yield after `TLSConnection.readBudgetBytes` a turn, reading
/// stops while the output is over `TLSConnection.outputHighWater`, and a graceful close
/// lingers at most `TLSConnection.lingerNanos` and `lingerBudgetBytes`. Runs on the
/// loop's thread.
public final class PlainConnection: EventHandler, ByteStream {
  private enum State { case open, closing, closed }

  public let loop: EventLoop
  public let peer: SocketAddress?
  public private(set) var lastActivity: UInt64
  public weak var delegate: (any ByteStreamDelegate)?
  public var verifiedPeerName: String? { nil }
  public var readingHeld = false {
    didSet {
      guard oldValue != readingHeld, state == .open else { return }
      if !readingHeld { scheduleRead() }
      updateInterest()
    }
  }

  private let fd: Int32
  private var state = State.open
  private var registration: UInt64 = 0
  private var output: [UInt8] = []
  private var outputIndex = 0
  public private(set) var readPaused = false
  private var interest: IOEvents = [.readable]
  private var flushScheduled = false
  private var readScheduled = false
  private var lingerTimer: UInt64?
  private var lingerBytes = 0

  /// Takes ownership of `fd`, an accepted non-blocking socket.
  public init(fd: Int32, loop: EventLoop, peer: SocketAddress?) {
    self.fd = fd
    self.loop = loop
    self.peer = peer
    lastActivity = MonotonicClock.now()
  }

  /// Registers with the loop; call on the loop thread.
  public func start() {
    do {
      registration = try loop.register(fd: fd, events: interest, handler: self)
    } catch {
      finishClose(error: error, registered: false)
    }
  }

  public var isOpen: Bool { state == .open }
  public var hasPendingOutput: Bool { outputIndex < output.count }

  public func send(bytes: [UInt8]) {
    guard state == .open else { return }
    output.append(contentsOf: bytes)
    lastActivity = MonotonicClock.now()
    if output.count - outputIndex > TLSConnection.outputHighWater { readPaused = true }
    guard !flushScheduled else { return }
    flushScheduled = true
    loop.atEndOfIteration { [self] in
      flushScheduled = false
      guard state == .open else { return }
      flush()
      updateInterest()
    }
  }

  public func closeGracefully() {
    guard state == .open else { return }
    state = .closing
    lingerTimer = loop.schedule(afterNanos: TLSConnection.lingerNanos) { [weak self] in
      self?.finishClose(error: nil)
    }
    flush()
    if !hasPendingOutput { _ = Glibc.shutdown(fd, Int32(SHUT_WR)) }
    updateInterest()
  }

  public func close(error: (any Error)?) {
    finishClose(error: error)
  }

  public func handleEvents(_ events: IOEvents) {
    switch state {
    case .closed:
      return
    case .open:
      // The peer left while its request was served: closing cancels the request.
      if readingHeld && !events.isDisjoint(with: [.hangup, .error, .readHangup]) {
        finishClose(error: nil)
        return
      }
      readAvailable()
      if state == .open { flush() }
    case .closing:
      let wasPending = hasPendingOutput
      flush()
      if wasPending && !hasPendingOutput { _ = Glibc.shutdown(fd, Int32(SHUT_WR)) }
      discardInput()
    }
    updateInterest()
  }

  private func scheduleRead() {
    guard !readScheduled else { return }
    readScheduled = true
    loop.runOnNextIteration { [self] in
      readScheduled = false
      guard state == .open else { return }
      readAvailable()
      if state == .open { flush() }
      updateInterest()
    }
  }

  private func readAvailable() {
    let buffer = loop.scratch
    var bytesRead = 0
    var delivered = 0
    while state == .open && !readingHeld && !readPaused {
      if let delegate, !delegate.streamDeliverBuffered(self, delivered: &delivered) {
        if state == .open && !readPaused && !readingHeld { scheduleRead() }
        return
      }
      if bytesRead >= TLSConnection.readBudgetBytes {
        scheduleRead()
        return
      }
      let n = Glibc.recv(fd, buffer.baseAddress, buffer.count, Int32(MSG_DONTWAIT))
      if n > 0 {
        bytesRead += n
        lastActivity = MonotonicClock.now()
        delegate?.stream(self, didReceive: UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
        continue
      }
      if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) { return }
      finishClose(error: n < 0 ? SystemError("recv", errno: errno) : nil)
      return
    }
  }

  /// Reads and drops what the peer still sends while closing; closes at its end.
  private func discardInput() {
    let buffer = loop.scratch
    while lingerBytes < TLSConnection.lingerBudgetBytes {
      let n = Glibc.recv(fd, buffer.baseAddress, buffer.count, Int32(MSG_DONTWAIT))
      if n > 0 {
        lingerBytes += n
        continue
      }
      if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) { return }
      break
    }
    finishClose(error: nil)
  }

  private func flush() {
    while outputIndex < output.count {
      let n = output.withUnsafeBytes { raw in
        Glibc.send(
          fd, raw.baseAddress.map { $0 + outputIndex }, output.count - outputIndex,
          Int32(MSG_DONTWAIT | MSG_NOSIGNAL))
      }
      if n > 0 {
        outputIndex += n
        continue
      }
      if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
        if outputIndex >= 64 * 1024 && outputIndex * 2 >= output.count {
          output.removeSubrange(0..<outputIndex)
          outputIndex = 0
        }
        resumeIfDrained()
        return
      }
      finishClose(error: SystemError("send", errno: errno))
      return
    }
    output = []
    outputIndex = 0
    resumeIfDrained()
  }

  private func resumeIfDrained() {
    guard readPaused, output.count - outputIndex <= TLSConnection.outputLowWater else { return }
    readPaused = false
    guard state == .open else { return }
    scheduleRead()
    // On the next iteration, not from inside `flush` (see TLSConnection.notifyDrained).
    loop.runOnNextIteration { [weak self] in
      guard let self, self.state == .open else { return }
      self.delegate?.streamOutputDrained(self)
    }
  }

  private func updateInterest() {
    guard state != .closed, registration != 0 else { return }
    let wantWritable = hasPendingOutput
    let wantReadable = state == .closing || !(readingHeld || (readPaused && wantWritable))
    var events: IOEvents = []
    if wantReadable { events.insert(.readable) }
    if wantWritable { events.insert(.writable) }
    guard events != interest else { return }
    interest = events
    loop.modify(
      fd: fd, registration: registration, events: events,
      watchHangup: wantReadable || (readingHeld && state == .open))
  }

  private func finishClose(error: (any Error)?, registered: Bool = true) {
    guard state != .closed else { return }
    state = .closed
    if let lingerTimer { loop.cancelTimer(lingerTimer) }
    if registered, registration != 0 { loop.deregister(fd: fd, registration: registration) }
    Socket.close(fd)
    output = []
    outputIndex = 0
    delegate?.streamDidClose(self, error: error)
  }
}
