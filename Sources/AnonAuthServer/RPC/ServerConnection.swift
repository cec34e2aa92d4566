import AnonAuthNet
import AnonAuthService
import AnonAuthWire

/// The server side of one connection: turns `Call` frames into routed calls, enforces
/// the per-connection call limit and each call's deadline, and says `GoAway` when the
/// peer breaks the framing or the server drains. Lives on its connection's loop.
///
/// A call holds one of the connection's `maxConcurrentCallsPerConnection` slots until
/// its handler task has returned, not until it was answered (`CallSlots`, which a future
/// transport's connection uses the same way).
final class ServerConnection: TLSConnectionDelegate, ServedConnection {
  private struct InFlight {
    let task: Task<Void, Never>
    let timer: UInt64
    let startedAt: UInt64
    let method: String
    let requestID: String
    let log: CallLogFields
  }

  /// The most Unicode scalars of a client's `x-request-id` kept (echoed and logged).
  static let maxRequestIDScalars = 128

  let connection: TLSConnection
  private let core: ServerCore
  private unowned let registry: ConnectionRegistry
  /// The calls in flight and the slots they hold; their payloads are charged to the
  /// process's and the peer's byte budget until their tasks return.
  private var slots: CallSlots<InFlight>
  private var lastCallID: UInt64 = 0
  private(set) var goingAway = false

  init(connection: TLSConnection, core: ServerCore, registry: ConnectionRegistry) {
    self.connection = connection
    self.core = core
    self.registry = registry
    slots = CallSlots(
      limit: core.config.maxConcurrentCallsPerConnection,
      bytes: core.receiveBudget.account(for: connection.peer?.host))
  }

  var isIdle: Bool { slots.unanswered == 0 && !connection.hasPendingOutput }
  var inFlightCount: Int { slots.unanswered }
  /// Handler tasks of this connection that have not returned: what the limit counts.
  var slotsTaken: Int { slots.taken }

  // MARK: TLSConnectionDelegate

  /// The handshake chose the protocol (docs/protocol.md §1): `http/1.1` hands the
  /// connection to an `HTTPServerConnection`, `h2` to an `HTTP2ServerConnection`, which
  /// takes this one's place in the registry; `anonauth/1` or no ALPN stays here, with frames.
  func connectionDidHandshake(_ connection: TLSConnection) {
    switch connection.negotiatedProtocol {
    case TLSContext.http11:
      let http = HTTPServerConnection(stream: connection, listener: .rpcPort, core: core, registry: registry)
      registry.replace(self, with: http)
      connection.switchToBytes(delegate: http)
      if goingAway { http.drain() }
    case TLSContext.h2:
      let http2 = HTTP2ServerConnection(stream: connection, core: core, registry: registry)
      registry.replace(self, with: http2)
      connection.switchToBytes(delegate: http2)
      if goingAway { http2.drain() }
    default:
      return
    }
  }

  var peerHost: String? { connection.peer?.host }

  func closeNow() { connection.close() }

  func connection(_ connection: TLSConnection, didReceive frame: Frame) {
    switch frame.kind {
    case .call(let call):
      handle(call)
    case .ping, .pong:  // Ping is answered by the connection itself
      break
    case .reply, .goAway:
      fail(.malformed("a client may not send Reply or GoAway"))
    case nil:
      fail(.malformed("frame kind not set"))
    }
  }

  func connection(_ connection: TLSConnection, didFailWith error: FrameError) {
    fail(error)
  }

  func connectionDidClose(_ connection: TLSConnection, error: (any Error)?) {
    // Expired calls were cancelled when they expired; nothing is left to answer.
    for call in slots.removeAll() {
      call.task.cancel()
      connection.loop.cancelTimer(call.timer)
    }
    registry.remove(self)
    core.connectionClosed()
  }

  // MARK: Calls

  private func handle(_ call: Call) {
    lastCallID = max(lastCallID, call.id)
    // Cut by Unicode scalars, not Characters: one Character can be any number of
    // combining scalars, and the id is echoed in the reply and logged.
    let requestID =
      call.metadata["x-request-id"].flatMap {
        $0.isEmpty
          ? nil : String(String.UnicodeScalarView($0.unicodeScalars.prefix(Self.maxRequestIDScalars)))
      }
      ?? RequestID.make()
    if goingAway {
      reply(
        to: call.id, requestID: requestID,
        result: .failure(RPCError(.shuttingDown, "the server is shutting down")))
      return
    }
    let timeoutMs = core.config.effectiveTimeoutMs(requested: call.timeoutMs)
    let log = CallLogFields()
    let bound = LoopBound(self, loop: connection.loop)
    let context = CallContext(
      method: call.method, metadata: call.metadata, peerIP: connection.peer?.host,
      requestID: requestID, log: log, clientCertificateName: connection.verifiedPeerName,
      authenticated: { credential in
        guard credential == .adminKey else { return }
        bound.execute { $0.allowLargeFrames() }
      })
    let router = core.router
    let payload = call.payload
    let id = call.id
    let core = core
    let method = call.method
    let loop = connection.loop
    // The payload stays in memory until the task returns: it counts against the same
    // budgets as a frame being received, so that calls waiting on a slow resource, on
    // many connections, cannot hold more than the budget. The decoder's charge for the
    // frame was given back just before, so this rarely fails; what it mostly does is
    // leave less room for the peer's next frames (GoAway RESOURCE_EXHAUSTED when full).
    let admission = slots.admit(id, payloadBytes: payload.count) { sequence in
      let startedAt = MonotonicClock.now()
      let metrics = core.metrics
      metrics.handlerStarted()
      let task = Task {
        defer { metrics.handlerEnded() }
        let result: Result<[UInt8], RPCError>
        do throws(RPCError) {
          result = .success(try await router.handle(context, payload: payload))
        } catch {
          result = .failure(error)
        }
        // The line and the metrics are made here, off the event loop: the loop only
        // frames and sends the reply.
        if log.claimLogging() {
          core.logCall(
            method: method, requestID: requestID, result: result, nanos: MonotonicClock.now() - startedAt,
            fields: log)
        }
        bound.execute { $0.complete(id, sequence: sequence, result: result) }
      }
      let timer = loop.schedule(afterNanos: timeoutMs * 1_000_000) { [weak self] in
        self?.expire(id, sequence: sequence)
      }
      return InFlight(
        task: task, timer: timer, startedAt: startedAt, method: method, requestID: requestID, log: log)
    }
    switch admission {
    case .admitted:
      break
    case .idInUse:
      fail(.malformed("call id \(call.id) is already in flight"))
    case .full:
      reply(
        to: call.id, requestID: requestID,
        result: .failure(
          RPCError(.tooManyCalls, "more than \(core.config.maxConcurrentCallsPerConnection) calls in flight"))
      )
    case .overBudget:
      core.metrics.callsOverBufferBudget.add(1, ordering: .relaxed)
      reply(
        to: call.id, requestID: requestID,
        result: .failure(RPCError(.tooManyCalls, "too many bytes of calls in flight from this address")))
    }
  }

  /// The call's task has returned: its slot is free. Its result is sent unless the call
  /// expired first (answered already; the id may belong to a newer call by now).
  private func complete(_ id: UInt64, sequence: UInt64, result: Result<[UInt8], RPCError>) {
    guard let call = slots.taskEnded(id, sequence: sequence) else {
      if goingAway && slotsTaken == 0 { connection.closeGracefully() }
      return
    }
    connection.loop.cancelTimer(call.timer)
    finish(call, id: id, result: result)
  }

  /// The deadline passed: answered now, the task cancelled, the slot kept until the task
  /// returns (`complete`).
  private func expire(_ id: UInt64, sequence: UInt64) {
    guard let call = slots.expire(id, sequence: sequence) else { return }
    call.task.cancel()
    finish(call, id: id, result: .failure(RPCError(.deadlineExceeded, "the call's deadline passed")))
  }

  private func finish(_ call: InFlight, id: UInt64, result: Result<[UInt8], RPCError>) {
    reply(to: id, requestID: call.requestID, result: result)
    // Logged here only when the deadline passed before the handler finished.
    if call.log.claimLogging() {
      core.logCall(
        method: call.method, requestID: call.requestID, result: result,
        nanos: MonotonicClock.now() - call.startedAt, fields: call.log)
    }
    if goingAway && slotsTaken == 0 { connection.closeGracefully() }
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
    connection.send(frame)
  }

  /// An admin-key call passed its check: from the next frame on, the connection may
  /// send frames up to the configured maximum (until then, `maxUnauthenticatedFrameSize`).
  private func allowLargeFrames() {
    connection.frameLimit = core.config.maxFrameSize
  }

  // MARK: Connection-level endings

  /// A framing error: tell the peer why, then close this connection only.
  private func fail(_ error: FrameError) {
    if error == .overBudget { core.metrics.connectionsOverBufferBudget.add(1, ordering: .relaxed) }
    core.logger.warning(
      "connection error",
      ["reason": .string(error.goAwayReason), "peer": .string(connection.peer?.description ?? "")])
    sendGoAway(reason: error.goAway)
    for call in slots.records { call.task.cancel() }
    connection.closeGracefully()
  }

  /// Graceful shutdown: no new calls here; close once the calls in flight are answered.
  func drain() {
    guard !goingAway else { return }
    goingAway = true
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
    let config = core.config
    func age(_ since: UInt64) -> UInt64 { now > since ? now - since : 0 }
    switch connection.state {
    case .handshaking, .connecting:
      if age(connection.startedAt) > config.handshakeTimeoutMs * 1_000_000 {
        connection.close()
      }
    case .open:
      if let since = connection.partialFrameSince, age(since) > config.partialFrameTimeoutMs * 1_000_000 {
        connection.close()
      } else if slotsTaken == 0, !goingAway,
        age(connection.lastActivity) > config.idleTimeoutMs * 1_000_000
      {
        goingAway = true
        sendGoAway(reason: .idleTimeout)
        connection.closeGracefully()
      }
    case .closing, .closed:
      break
    }
  }

  private func sendGoAway(reason: GoAwayReason) {
    var goAway = GoAway()
    goAway.lastCallId = lastCallID
    goAway.reason = reason.name
    var frame = Frame()
    frame.kind = .goAway(goAway)
    connection.send(frame)
  }
}
