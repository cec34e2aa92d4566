import AnonAuthNet
import AnonAuthService
import AnonAuthWire

/// The server side of one HTTP/1.1 connection (docs/protocol.md §11), over TLS after ALPN
/// chose `http/1.1` or over the emulator listener's plain TCP: parses requests one at a
/// time, runs each through the `HTTPApplication` as a task of the connection's
/// `ConnectionCalls` (the same slot, byte budget, handler metrics and deadline as a
/// native call), and writes the replies in order. Lives on its connection's loop.
///
/// Pipelined requests are read but not parsed ahead: while a request is served the
/// connection stops reading, so what one peer makes the server hold is one request plus
/// at most one read of what follows it.
final class HTTPServerConnection: ByteStreamDelegate, ServedConnection {
  let stream: any ByteStream
  private let listener: HTTPListenerKind
  private let core: ServerCore
  private unowned let registry: ConnectionRegistry
  private var parser = HTTPRequestParser()
  /// What the parser holds (an unfinished head or body, pipelined bytes), charged to the
  /// process's and the peer's budget like an unfinished frame.
  private let held: ReceiveBudget.Account
  /// The request served now and the expired ones whose tasks still run; bodies charged.
  private let calls: ConnectionCalls
  /// The id in `calls` of the request being served, if one is.
  private var current: UInt64?
  private var lastID: UInt64 = 0
  /// The timeouts' clocks and the drain state (`closing`: the stream is closing).
  private var lifecycle: ConnectionLifecycle
  private var goingAway: Bool { lifecycle.isDraining }
  /// Set once a last reply is queued: nothing more is read or answered.
  private var closing: Bool { lifecycle.isClosing }
  /// When the unfinished request now being received began.
  private var partialSince: UInt64?

  init(stream: any ByteStream, listener: HTTPListenerKind, core: ServerCore, registry: ConnectionRegistry) {
    self.stream = stream
    self.listener = listener
    self.core = core
    self.registry = registry
    lifecycle = ConnectionLifecycle(config: core.config)
    held = core.receiveBudget.account(for: stream.peer?.host)
    calls = ConnectionCalls(
      core: core, loop: stream.loop, peerHost: stream.peer?.host,
      clientCertificateName: stream.verifiedPeerName)
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
    calls.cancelAll()
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
    let requestID = ConnectionCalls.requestID(request.header("x-request-id"))
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
    let timeoutMs = core.config.effectiveTimeoutMs(requested: 0)
    lastID &+= 1
    let id = lastID
    let keepAlive = framing.keepAlive
    let admission = calls.startTask(
      id: id, payloadBytes: request.body.count, timeoutNanos: timeoutMs * 1_000_000,
      work: { await application.respond(to: request, info: info) },
      answer: { [weak self] reply in
        guard let self else { return }
        current = nil
        stream.readingHeld = false
        send(reply, requestID: requestID, keepAlive: keepAlive, omitBody: omitBody)
        serveNext()
      },
      expired: { [weak self] in
        guard let self else { return }
        // 504 now, and the connection closed; the slot stays taken until the task returns.
        current = nil
        send(
          HTTPReplyEncoder.errorReply(status: 504, message: "the request's deadline passed"),
          requestID: requestID, keepAlive: false, omitBody: omitBody)
      })
    switch admission {
    case .admitted:
      current = id
      stream.readingHeld = true
    case .idInUse:
      // Ids are this connection's own counter: never in use.
      send(
        HTTPReplyEncoder.errorReply(status: 429, message: "too many requests in flight on this connection"),
        requestID: requestID, keepAlive: keepAlive, omitBody: omitBody)
    case .refused(let error):
      // Only when expired requests' tasks still hold every slot, or the address's bytes
      // in flight are over the budget (`draining` is answered above).
      send(
        HTTPReplyEncoder.errorReply(
          status: error.reason == Reason.shuttingDown.name ? 503 : 429, message: error.message),
        requestID: requestID, keepAlive: keepAlive, omitBody: omitBody)
    }
  }

  /// Queues a reply; closes after it when the request or the server says so, otherwise
  /// reads again (the caller goes on with the next request: never from here, so that
  /// many pipelined requests answered at once do not nest calls).
  private func send(_ reply: HTTPReply, requestID: String, keepAlive: Bool, omitBody: Bool) {
    guard !closing, stream.isOpen else { return }
    let close = !keepAlive || goingAway
    stream.send(bytes: HTTPReplyEncoder.encode(reply, requestID: requestID, close: close, omitBody: omitBody))
    if close {
      _ = lifecycle.beginClosing()
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
    calls.cancelAll()
    _ = lifecycle.beginClosing()
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
    guard lifecycle.beginDraining() else { return }
    calls.drain()
    guard stream.isOpen else { return }
    if current == nil {
      _ = lifecycle.beginClosing()
      stream.closeGracefully()
    }
  }

  /// Partial-request timeout (408, then closed) and idle keep-alive timeout.
  func checkTimeouts(now: UInt64) {
    guard stream.isOpen, !closing else { return }
    // Not reading because the peer does not read its answers: the rest of its request is
    // not late, it is not being read. Its clock starts again when reading does; a peer
    // that never reads is closed by the idle timeout (nothing is sent meanwhile).
    if stream.readPaused, partialSince != nil { partialSince = now }
    let expiry = lifecycle.expiry(
      now: now, partialSince: stream.readPaused ? nil : partialSince, lastActivity: stream.lastActivity,
      idle: current == nil && (stream.readPaused || partialSince == nil))
    switch expiry {
    case .partialRequest:
      refuse(
        HTTPTransportError(
          408, "the request was not complete within \(core.config.partialFrameTimeoutMs) ms"))
    case .idle:
      _ = lifecycle.beginClosing()
      stream.closeGracefully()
    case .handshake, nil:
      break
    }
  }
}
