import AnonAuthNet
import AnonAuthService

/// The server side of one HTTP/1.1 connection (docs/protocol.md §11), over TLS after ALPN
/// chose `http/1.1` or over the emulator listener's plain TCP: parses requests one at a
/// time, runs each through the `HTTPApplication` in a task with the same admission as a
/// native call (a `CallSlots` slot, its body charged to the receive budget, the handler
/// metrics, the call deadline), and writes the replies in order. Lives on its
/// connection's loop.
///
/// Pipelined requests are read but not parsed ahead: while a request is served the
/// connection stops reading, so what one peer makes the server hold is one request plus
/// at most one read of what follows it.
final class HTTPServerConnection: ByteStreamDelegate, ServedConnection {
  private struct InFlight {
    let task: Task<Void, Never>
    let timer: UInt64
    let requestID: String
    let keepAlive: Bool
    let omitBody: Bool
  }

  let stream: any ByteStream
  private let listener: HTTPListenerKind
  private let core: ServerCore
  private unowned let registry: ConnectionRegistry
  private var parser = HTTPRequestParser()
  /// What the parser holds (an unfinished head or body, pipelined bytes), charged to the
  /// process's and the peer's budget like an unfinished frame.
  private let held: ReceiveBudget.Account
  /// The request served now and the expired ones whose tasks still run; bodies charged.
  private var slots: CallSlots<InFlight>
  /// The id in `slots` of the request being served, if one is.
  private var current: UInt64?
  private var lastID: UInt64 = 0
  private var goingAway = false
  /// Set once a last reply is queued: nothing more is read or answered.
  private var closing = false
  /// When the unfinished request now being received began.
  private var partialSince: UInt64?

  init(stream: any ByteStream, listener: HTTPListenerKind, core: ServerCore, registry: ConnectionRegistry) {
    self.stream = stream
    self.listener = listener
    self.core = core
    self.registry = registry
    held = core.receiveBudget.account(for: stream.peer?.host)
    slots = CallSlots(
      limit: max(1, core.config.maxConcurrentCallsPerConnection),
      bytes: core.receiveBudget.account(for: stream.peer?.host))
  }

  var peerHost: String? { stream.peer?.host }

  func closeNow() { stream.close(error: nil) }

  // MARK: ByteStreamDelegate

  func stream(_ stream: any ByteStream, didReceive bytes: UnsafeRawBufferPointer) {
    guard !closing else { return }
    parser.append(bytes)
    guard held.resize(to: parser.bufferedBytes) else {
      core.metrics.connectionsOverBufferBudget.add(1, ordering: .relaxed)
      refuse(HTTPTransportError(429, "too many bytes of unfinished requests from this address"))
      return
    }
    serveNext()
  }

  func streamDidClose(_ stream: any ByteStream, error: (any Error)?) {
    for call in slots.removeAll() {
      call.task.cancel()
      stream.loop.cancelTimer(call.timer)
    }
    current = nil
    parser = HTTPRequestParser()
    held.release()
    registry.remove(self)
    core.connectionClosed()
  }

  // MARK: Requests

  /// Parses and starts the next request, unless one is being served.
  private func serveNext() {
    while current == nil && !closing && stream.isOpen {
      let step: HTTPRequestParser.Step
      do {
        step = try parser.next()
      } catch {
        refuse(error)
        return
      }
      switch step {
      case .needMore:
        _ = held.resize(to: parser.bufferedBytes)
        partialSince = parser.hasPartialRequest ? (partialSince ?? MonotonicClock.now()) : nil
        return
      case .head(let head, let framing):
        let large = core.httpApplication?.admitsLargeBody(head, listener: listener) ?? false
        do {
          try parser.admitBody(
            limit: large ? core.config.maxFrameSize : core.config.maxUnauthenticatedFrameSize)
        } catch {
          refuse(error)
          return
        }
        if framing.expectsContinue && parser.awaitsBodyBytes {
          stream.send(bytes: HTTPReplyEncoder.continueBytes)
        }
      case .request(let request, let framing):
        _ = held.resize(to: parser.bufferedBytes)
        partialSince = nil
        start(request, framing)
      }
    }
  }

  private func start(_ request: HTTPRequest, _ framing: HTTPRequestFraming) {
    // Cut by Unicode scalars, as the native transport cuts its metadata.
    let requestID =
      request.header("x-request-id").flatMap {
        $0.isEmpty
          ? nil
          : String(String.UnicodeScalarView($0.unicodeScalars.prefix(ServerConnection.maxRequestIDScalars)))
      } ?? RequestID.make()
    let omitBody = request.method == "HEAD"
    if goingAway {
      send(
        HTTPReplyEncoder.errorReply(status: 503, message: "the server is shutting down"),
        requestID: requestID,
        keepAlive: false, omitBody: omitBody)
      return
    }
    guard let application = core.httpApplication else {
      send(
        HTTPReplyEncoder.errorReply(status: 404, message: "no HTTP API is served here"), requestID: requestID,
        keepAlive: framing.keepAlive, omitBody: omitBody)
      return
    }
    let info = HTTPCallInfo(
      peerIP: stream.peer?.host, clientCertificateName: stream.verifiedPeerName, listener: listener,
      requestID: requestID)
    let bound = LoopBound(self, loop: stream.loop)
    let metrics = core.metrics
    let loop = stream.loop
    let timeoutMs = core.config.effectiveTimeoutMs(requested: 0)
    lastID &+= 1
    let id = lastID
    let admission = slots.admit(id, payloadBytes: request.body.count) { sequence in
      metrics.handlerStarted()
      let task = Task {
        defer { metrics.handlerEnded() }
        let reply = await application.respond(to: request, info: info)
        bound.execute { $0.complete(id, sequence: sequence, reply: reply) }
      }
      let timer = loop.schedule(afterNanos: timeoutMs * 1_000_000) { [weak self] in
        self?.expire(id, sequence: sequence)
      }
      return InFlight(
        task: task, timer: timer, requestID: requestID, keepAlive: framing.keepAlive, omitBody: omitBody)
    }
    switch admission {
    case .admitted:
      current = id
      stream.readingHeld = true
    case .idInUse, .full:
      // Only when expired requests' tasks still hold every slot.
      send(
        HTTPReplyEncoder.errorReply(status: 429, message: "too many requests in flight on this connection"),
        requestID: requestID, keepAlive: framing.keepAlive, omitBody: omitBody)
    case .overBudget:
      core.metrics.callsOverBufferBudget.add(1, ordering: .relaxed)
      send(
        HTTPReplyEncoder.errorReply(
          status: 429, message: "too many bytes of requests in flight from this address"),
        requestID: requestID, keepAlive: framing.keepAlive, omitBody: omitBody)
    }
  }

  /// The application answered; the slot is free.
  private func complete(_ id: UInt64, sequence: UInt64, reply: HTTPReply) {
    guard let call = slots.taskEnded(id, sequence: sequence) else { return }  // expired first
    stream.loop.cancelTimer(call.timer)
    current = nil
    stream.readingHeld = false
    send(reply, requestID: call.requestID, keepAlive: call.keepAlive, omitBody: call.omitBody)
    serveNext()
  }

  /// The deadline passed: 504 now, the task cancelled, and the connection closed (the
  /// slot stays taken until the task returns).
  private func expire(_ id: UInt64, sequence: UInt64) {
    guard let call = slots.expire(id, sequence: sequence) else { return }
    call.task.cancel()
    current = nil
    send(
      HTTPReplyEncoder.errorReply(status: 504, message: "the request's deadline passed"),
      requestID: call.requestID, keepAlive: false, omitBody: call.omitBody)
  }

  /// Queues a reply; closes after it when the request or the server says so, otherwise
  /// reads again (the caller goes on with the next request: never from here, so that
  /// many pipelined requests answered at once do not nest calls).
  private func send(_ reply: HTTPReply, requestID: String, keepAlive: Bool, omitBody: Bool) {
    guard !closing, stream.isOpen else { return }
    let close = !keepAlive || goingAway
    stream.send(bytes: HTTPReplyEncoder.encode(reply, requestID: requestID, close: close, omitBody: omitBody))
    if close {
      closing = true
      stream.closeGracefully()
      return
    }
    stream.readingHeld = false
  }

  /// A request the transport refuses (framing, limits, timeouts): its status and why,
  /// then the connection is closed, since what follows cannot be trusted to be a request.
  private func refuse(_ error: HTTPTransportError) {
    guard !closing, stream.isOpen else { return }
    core.logger.warning(
      "http request refused",
      [
        "status": .int(Int64(error.status)), "reason": .string(error.message),
        "peer": .string(stream.peer?.description ?? ""),
      ])
    for call in slots.records { call.task.cancel() }
    closing = true
    partialSince = nil
    let reply = HTTPReplyEncoder.errorReply(status: error.status, message: error.message)
    stream.send(bytes: HTTPReplyEncoder.encode(reply, requestID: RequestID.make(), close: true))
    parser = HTTPRequestParser()
    held.release()
    stream.closeGracefully()
  }

  // MARK: ServedConnection

  /// Graceful shutdown: a request in flight is answered with `Connection: close`; an
  /// idle connection, or one with only part of a request, is closed now.
  func drain() {
    guard !goingAway else { return }
    goingAway = true
    guard stream.isOpen else { return }
    if current == nil {
      closing = true
      stream.closeGracefully()
    }
  }

  /// Partial-request timeout (408, then closed) and idle keep-alive timeout.
  func checkTimeouts(now: UInt64) {
    guard stream.isOpen, !closing else { return }
    let config = core.config
    func age(_ since: UInt64) -> UInt64 { now > since ? now - since : 0 }
    if stream.readPaused {
      // Not reading because the peer does not read its answers: the rest of its request
      // is not late, it is not being read. Its clock starts again when reading does; a
      // peer that never reads is closed by the idle timeout (nothing is sent meanwhile).
      if partialSince != nil { partialSince = now }
      if current == nil, age(stream.lastActivity) > config.idleTimeoutMs * 1_000_000 {
        closing = true
        stream.closeGracefully()
      }
      return
    }
    if let since = partialSince, age(since) > config.partialFrameTimeoutMs * 1_000_000 {
      refuse(
        HTTPTransportError(408, "the request was not complete within \(config.partialFrameTimeoutMs) ms"))
    } else if current == nil, partialSince == nil, age(stream.lastActivity) > config.idleTimeoutMs * 1_000_000
    {
      closing = true
      stream.closeGracefully()
    }
  }
}
