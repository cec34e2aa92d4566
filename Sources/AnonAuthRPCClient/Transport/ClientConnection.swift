import AnonAuthNet
import AnonAuthWire

/// The client side of one connection: numbers calls, matches replies by id, enforces
/// each call's deadline, and after a `GoAway` takes no new calls. The frames come from the
/// bytes through a `FrameReader`, as on the server (which answers Pings). Loop-confined.
final class ClientConnection: TLSHandshakeDelegate, ByteStreamDelegate {
  typealias Completion = @Sendable (Result<Reply, CallFailure>) -> Void

  /// Why a call got no reply.
  typealias CallFailure = ClientCallFailure

  private struct Pending {
    let completion: Completion
    let timer: UInt64
  }

  let tls: TLSConnection
  private var pending: [UInt64: Pending] = [:]
  private var nextID: UInt64 = 1
  private(set) var goingAway = false
  private(set) var closed = false
  private var handshaken = false
  private let flags: ConnectionFlags
  private var reader: FrameReader

  init(tls: TLSConnection, flags: ConnectionFlags, maxFrameSize: Int) {
    self.tls = tls
    self.flags = flags
    reader = FrameReader(maxFrameSize: maxFrameSize, clock: MonotonicClock.now)
  }

  var usable: Bool { !goingAway && !closed }

  /// Sends a call; `completion` runs exactly once, on the loop.
  func start(
    method: String, payload: [UInt8], metadata: [String: String], timeoutMs: UInt32,
    completion: @escaping Completion
  ) {
    guard usable else {
      completion(.failure(.notProcessed("connection is going away")))
      return
    }
    let id = nextID
    nextID += 1
    var call = Call()
    call.id = id
    call.method = method
    call.metadata = metadata
    call.timeoutMs = timeoutMs
    call.payload = payload
    var frame = Frame()
    frame.kind = .call(call)
    let timer = tls.loop.schedule(afterNanos: UInt64(timeoutMs) * 1_000_000 + 50_000_000) { [weak self] in
      self?.finish(id, .failure(.failed(RPCError(.deadlineExceeded, "no reply within \(timeoutMs) ms"))))
    }
    pending[id] = Pending(completion: completion, timer: timer)
    tls.send(bytes: FrameReader.encode(frame))
  }

  /// Sends a Ping; the Pong only counts as activity.
  func ping(nonce: UInt64) {
    var ping = Ping()
    ping.nonce = nonce
    var frame = Frame()
    frame.kind = .ping(ping)
    tls.send(bytes: FrameReader.encode(frame))
  }

  func close() { tls.closeGracefully() }

  private func finish(_ id: UInt64, _ result: Result<Reply, CallFailure>) {
    guard let call = pending.removeValue(forKey: id) else { return }
    tls.loop.cancelTimer(call.timer)
    call.completion(result)
  }

  // MARK: TLSHandshakeDelegate, ByteStreamDelegate

  func connectionDidHandshake(_ connection: TLSConnection) {
    handshaken = true
  }

  func stream(_ stream: any ByteStream, didReceive bytes: UnsafeRawBufferPointer) {
    _ = reader.append(bytes)  // no budget on the client: never refused
  }

  /// Delivers the frames the reader holds, within the turn's budget.
  func streamDeliverBuffered(_ stream: any ByteStream, delivered: inout Int) -> Bool {
    while tls.state == .open {
      if tls.readPaused { return false }
      switch reader.next(delivered: &delivered, send: { tls.send(bytes: $0) }) {
      case .frame(let frame): received(frame)
      case .needMore: return true
      case .turnSpent: return false
      case .failed(let error):
        tls.close(error: error)
        return false
      }
    }
    return false
  }

  private func received(_ frame: Frame) {
    switch frame.kind {
    case .reply(let reply):
      finish(reply.id, .success(reply))
    case .goAway(let goAway):
      goingAway = true
      flags.markUnusable()
      // Calls above last_call_id were never seen: they may be sent again elsewhere.
      for id in pending.keys.sorted() where id > goAway.lastCallId {
        finish(id, .failure(.notProcessed("server sent GoAway \(goAway.reason)")))
      }
      if pending.isEmpty { tls.closeGracefully() }
    case .ping, .pong, .call, nil:  // Ping is answered by the reader
      break
    }
    if goingAway && pending.isEmpty && tls.state == .open { tls.closeGracefully() }
  }

  func streamDidClose(_ stream: any ByteStream, error: (any Error)?) {
    reader.reset()
    closed = true
    flags.markUnusable()
    let why = error.map { "\($0)" } ?? "connection closed"
    for id in pending.keys.sorted() {
      // Before the handshake nothing was sent: the call may go to another connection.
      let failure: CallFailure =
        handshaken
        ? .failed(RPCError(code: .unavailable, reason: "UNAVAILABLE", message: why)) : .notProcessed(why)
      finish(id, .failure(failure))
    }
  }
}
