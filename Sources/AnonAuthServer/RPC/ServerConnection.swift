import AnonAuthNet
import AnonAuthService
import AnonAuthWire

/// The server side of one `anonauth/1` connection: turns `Call` frames into calls of the
/// connection's `ConnectionCalls` (slots, budgets, deadline, log line, metrics: the rules
/// every transport shares) and their answers into `Reply` frames, and says `GoAway` when
/// the peer breaks the framing or the server drains. The frames come from the bytes
/// through a `FrameReader` (size limit, partial-frame clock, receive charge, Pings).
/// Lives on its connection's loop.
final class ServerConnection: TLSHandshakeDelegate, ByteStreamDelegate, ServedConnection {
  let connection: TLSConnection
  private let core: ServerCore
  /// The frames in the bytes; what it holds is charged to the process's and the peer's
  /// budget of partly received bytes.
  private var reader: FrameReader
  private unowned let registry: ConnectionRegistry
  /// The calls in flight and the slots they hold; their payloads are charged to the
  /// process's and the peer's byte budget until their tasks return.
  let calls: ConnectionCalls
  private var lastCallID: UInt64 = 0
  /// The timeouts' clocks and the drain state.
  private var lifecycle: ConnectionLifecycle
  var goingAway: Bool { lifecycle.isDraining }

  init(connection: TLSConnection, core: ServerCore, registry: ConnectionRegistry) {
    self.connection = connection
    self.core = core
    self.registry = registry
    lifecycle = ConnectionLifecycle(config: core.config)
    calls = ConnectionCalls(
      core: core, loop: connection.loop, peerHost: connection.peer?.host, clientCertificateName: nil)
    reader = FrameReader(
      maxFrameSize: core.config.maxFrameSize, frameLimit: core.config.maxUnauthenticatedFrameSize,
      charge: core.receiveBudget.account(for: connection.peer?.host), clock: MonotonicClock.now)
    calls.onAllEnded = { [weak self] in
      guard let self, goingAway else { return }
      connection.closeGracefully()
    }
  }

  var isIdle: Bool { calls.unanswered == 0 && !connection.hasPendingOutput }
  var inFlightCount: Int { calls.unanswered }
  /// Handler tasks of this connection that have not returned: what the limit counts.
  var slotsTaken: Int { calls.taken }

  // MARK: TLSHandshakeDelegate, ByteStreamDelegate

  /// The handshake chose the protocol (`TransportSwitch`): a byte-level transport
  /// (HTTP/1.1, HTTP/2) takes this one's place in the registry and gets the stream's
  /// bytes; `anonauth/1` stays here, with frames. Without ALPN the first bytes decide
  /// (`sniffing`).
  func connectionDidHandshake(_ connection: TLSConnection) {
    calls.clientCertificateName = connection.verifiedPeerName
    guard let choice = TransportSwitch.choice(alpn: connection.negotiatedProtocol) else {
      sniffing = []
      return
    }
    _ = hand(to: choice, replaying: [])
  }

  /// Gives the connection to the byte-level transport `choice` names, with `bytes` it
  /// already received. False for native frames: they stay here.
  private func hand(to choice: TransportSwitch.Choice, replaying bytes: [UInt8]) -> Bool {
    guard
      let transport = TransportSwitch.byteTransport(
        choice, stream: connection, core: core, registry: registry)
    else { return false }
    registry.replace(self, with: transport)
    connection.delegate = transport
    if goingAway { transport.drain() }
    if !bytes.isEmpty {
      bytes.withUnsafeBytes { transport.stream(connection, didReceive: $0) }
    }
    return true
  }

  /// The first bytes of a connection that offered no ALPN, held until they tell an HTTP
  /// request line from a native frame (at most "OPTIONS": `TransportSwitch.sniff`); nil
  /// once decided, or when ALPN decided.
  private var sniffing: [UInt8]?
  /// When the first held bytes came: held bytes age as a partial frame does.
  private var sniffingSince: UInt64?

  var peerHost: String? { connection.peer?.host }

  func closeNow() { connection.close() }

  func stream(_ stream: any ByteStream, didReceive bytes: UnsafeRawBufferPointer) {
    if var held = sniffing {
      held.append(contentsOf: bytes)
      switch TransportSwitch.sniff(held) {
      case .needMore:
        sniffing = held
        if sniffingSince == nil { sniffingSince = MonotonicClock.now() }
        return
      case .decided(let choice):
        sniffing = nil
        sniffingSince = nil
        if hand(to: choice, replaying: held) { return }
        if !held.withUnsafeBytes({ reader.append($0) }) { fail(.overBudget) }
        return
      }
    }
    if !reader.append(bytes) { fail(.overBudget) }
  }

  /// Delivers the frames the reader holds, within the turn's budget and while the peer
  /// reads its answers (`readPaused`: not while output is over the high watermark).
  func streamDeliverBuffered(_ stream: any ByteStream, delivered: inout Int) -> Bool {
    while connection.state == .open {
      if connection.readPaused { return false }
      switch reader.next(delivered: &delivered, send: { connection.send(bytes: $0) }) {
      case .frame(let frame): received(frame)
      case .needMore: return true
      case .turnSpent: return false
      case .failed(let error):
        fail(error)
        return false
      }
    }
    return false
  }

  private func received(_ frame: Frame) {
    switch frame.kind {
    case .call(let call):
      handle(call)
    case .ping, .pong:  // Ping is answered by the reader
      break
    case .reply, .goAway:
      fail(.malformed("a client may not send Reply or GoAway"))
    case nil:
      fail(.malformed("frame kind not set"))
    }
  }

  func streamDidClose(_ stream: any ByteStream, error: (any Error)?) {
    // Expired calls were cancelled when they expired; nothing is left to answer.
    reader.reset()
    calls.cancelAll()
    registry.remove(self)
    core.connectionClosed()
  }

  // MARK: Calls

  /// Starts a call. Its payload stays in memory until the task returns and counts
  /// against the same budgets as a frame being received (`ConnectionCalls`); the
  /// decoder's charge for the frame was given back just before, so what this mostly does
  /// is leave less room for the peer's next frames (GoAway RESOURCE_EXHAUSTED when full).
  private func handle(_ call: Call) {
    lastCallID = max(lastCallID, call.id)
    let requestID = ConnectionCalls.requestID(call.metadata["x-request-id"])
    let id = call.id
    let bound = LoopBound(self, loop: connection.loop)
    let admission = calls.startCall(
      id: id, method: call.method, metadata: call.metadata, requestID: requestID, timeoutMs: call.timeoutMs,
      payload: call.payload,
      authenticated: { credential in
        guard credential == .adminKey else { return }
        bound.execute { $0.allowLargeFrames() }
      },
      answer: { [weak self] result in self?.reply(to: id, requestID: requestID, result: result) })
    switch admission {
    case .admitted:
      break
    case .idInUse:
      fail(.malformed("call id \(id) is already in flight"))
    case .refused(let error):
      reply(to: id, requestID: requestID, result: .failure(error))
    }
  }

  private func reply(to id: UInt64, requestID: String, result: Result<[UInt8], RPCError>) {
    var reply = Reply()
    reply.id = id
    reply.metadata = ["x-request-id": requestID]
    var status = Status()
    switch result {
    case .success(let payload):
      reply.payload = payload
    case .failure(let error):
      status.code = error.code.rawValue
      status.reason = error.reason
      status.message = error.message
      status.details = error.details
    }
    reply.status = status
    var frame = Frame()
    frame.kind = .reply(reply)
    connection.send(bytes: FrameReader.encode(frame))
  }

  /// An admin-key call passed its check: from the next frame on, the connection may
  /// send frames up to the configured maximum (until then, `maxUnauthenticatedFrameSize`).
  private func allowLargeFrames() {
    reader.frameLimit = core.config.maxFrameSize
  }

  // MARK: Connection-level endings

  /// A framing error: tell the peer why, then close this connection only.
  private func fail(_ error: FrameError) {
    if error == .overBudget { core.metrics.connectionsOverBufferBudget.add(1, ordering: .relaxed) }
    core.logger.warning(
      "connection error",
      ["reason": .string(error.goAwayReason), "peer": .string(connection.peer?.description ?? "")])
    sendGoAway(reason: error.goAway)
    calls.cancelAll()
    connection.closeGracefully()
  }

  /// Graceful shutdown: no new calls here; close once the calls in flight are answered.
  func drain() {
    guard lifecycle.beginDraining() else { return }
    calls.drain()
    guard connection.state == .open else {
      connection.close()
      return
    }
    sendGoAway(reason: .shuttingDown)
    if slotsTaken == 0 { connection.closeGracefully() }
  }

  /// Called by the periodic sweep: handshake, partial-frame and idle timeouts. Ages
  /// saturate at zero: an instant stamped after `now` was read is no age at all.
  func checkTimeouts(now: UInt64) {
    let handshaking = connection.state == .handshaking || connection.state == .connecting
    guard handshaking || connection.state == .open else { return }
    let expiry = lifecycle.expiry(
      now: now, handshakeSince: handshaking ? connection.startedAt : nil,
      partialSince: reader.partialFrameSince ?? sniffingSince, lastActivity: connection.lastActivity,
      idle: slotsTaken == 0 && lifecycle.isServing)
    switch expiry {
    case .handshake, .partialRequest:
      connection.close()
    case .idle:
      _ = lifecycle.beginDraining()
      calls.drain()
      sendGoAway(reason: .idleTimeout)
      connection.closeGracefully()
    case nil:
      break
    }
  }

  private func sendGoAway(reason: GoAwayReason) {
    var goAway = GoAway()
    goAway.lastCallId = lastCallID
    goAway.reason = reason.name
    var frame = Frame()
    frame.kind = .goAway(goAway)
    connection.send(bytes: FrameReader.encode(frame))
  }
}
