import AnonAuthNet
import AnonAuthService
import AnonAuthWire

/// Serves the gRPC streams of one HTTP/2 connection (docs/grpc.md): each stream is one
/// call, to a router method at its native path (unary: one request message, one
/// response) or to a `GRPCLocalMethod` (the standard services, streaming both ways).
/// Calls run through the connection's `ConnectionCalls`, so slots, byte budgets,
/// deadlines, metadata rules, log lines and metrics are the native transport's.
///
/// Made once per connection (`ServerCore.makeGRPCHandler`); loop thread only.
final class GRPCStreamHandler: HTTP2StreamHandler {
  private var streams: [Int32: GRPCStreamCall] = [:]
  /// The connection the streams belong to; set on the first stream.
  private weak var sink: (any HTTP2StreamSink)?
  /// An admin-key call passed its check on this connection: later messages may be as
  /// large as `maxFrameSize` (until then `maxUnauthenticatedFrameSize`), as on the
  /// native transport.
  private var largeMessages = false
  /// Calls to methods this server does not have: answered (UNIMPLEMENTED) and counted
  /// in `/metrics` like any call, but past a burst of `unknownCallBurst`, refilled as
  /// many a second, each also counts as a stream refused at once, so a client calling
  /// unknown paths as fast as it can has its connection ended (and its reconnections
  /// paced) instead of keeping a core busy; a client that calls several methods a
  /// server does not have yet is served.
  private var unknownCalls = HTTP2RefusalBucket(
    burst: GRPCStreamHandler.unknownCallBurst,
    refillNanos: 1_000_000_000 / UInt64(GRPCStreamHandler.unknownCallBurst))
  static let unknownCallBurst = 64

  /// Messages of a local method's client that may wait for it to read them: a client
  /// that sends faster than the method reads is answered `RESOURCE_EXHAUSTED`.
  static let maxQueuedMessages = 8
  /// The largest message a local method takes. Its queued messages are no longer charged
  /// to the receive budgets once handed on (`messagesTaken`: they wait in the method's
  /// stream, not in the connection's buffers), so they are kept small: the standard services' requests are a service or symbol name.
  /// A stream holds at most `maxQueuedMessages` of them (64 KiB).
  static let maxLocalMessageBytes = 8 * 1024

  /// The trailers of every successful call, made once.
  private static let okTrailers = GRPCStatus.ok.fields

  init() {}

  // MARK: HTTP2StreamHandler

  func streamOpened(_ stream: Int32, headers: [HTTP2Header], endStream: Bool, session: any HTTP2StreamSink) {
    sink = session
    let core = session.calls.core
    let head = GRPCRequestHead(headers: headers)
    let call = GRPCStreamCall(
      id: stream, head: head, requestID: ConnectionCalls.requestID(head.requestID),
      openedAt: MonotonicClock.now(),
      messageLimit: largeMessages ? core.config.maxFrameSize : core.config.maxUnauthenticatedFrameSize)
    call.requestEnded = endStream
    streams[stream] = call
    // Refusals in grpc-go's order; none carries a reason (they are gRPC's, not AnonAuth's).
    // Each counts with the connection's refusals (`streamRefusedAtOnce`).
    if head.method != "POST" {
      session.streamRefusedAtOnce(stream)
      finish(
        call, GRPCStatus(.internalError, "gRPC requests are POST, not \(Self.echo(head.method))"),
        httpStatus: 405)
      return
    }
    if let value = head.malformedTimeout {
      session.streamRefusedAtOnce(stream)
      finish(
        call, GRPCStatus(.internalError, "malformed grpc-timeout \"\(Self.echo(value))\""), httpStatus: 400)
      return
    }
    if head.hasUnsupportedEncoding {
      session.streamRefusedAtOnce(stream)
      finish(
        call,
        GRPCStatus(
          .unimplemented,
          "grpc-encoding \"\(Self.echo(head.encoding ?? ""))\" is not supported; messages must be identity"),
        extra: [HTTP2Header("grpc-accept-encoding", "identity")])
      return
    }
    if head.metadataOverLimits {
      session.streamRefusedAtOnce(stream)
      // The native transport refuses such a call's frame (MALFORMED_FRAME); here the
      // call alone is refused, with the payload's reason for a request it will not read.
      finish(
        call,
        GRPCStatus(
          RPCError(
            .malformedRequest,
            "metadata of \(head.metadataEntries) entries and \(head.metadataBytes) bytes is over the limits of "
              + "\(CallLimits.maxMetadataEntries) entries and \(CallLimits.maxMetadataBytes) bytes")))
      return
    }
    if let method = core.grpcMethods.method(at: head.path) {
      startLocal(call, method: method, session: session)
    } else if !core.router.knows(head.path) {
      // The router answers an unknown method before it reads the payload (UNKNOWN_METHOD,
      // code 12 UNIMPLEMENTED, its reason in the details), and logs it like any call: no
      // need to wait for the request. Past the burst of unknown calls it also counts as a
      // refusal (`unknownCalls`).
      if !unknownCalls.take(now: MonotonicClock.now()) { session.streamRefusedAtOnce(stream) }
      startUnary(call, payload: [], session: session)
    } else if endStream {
      finish(call, GRPCStatus(.internalError, "the request ended without a message"))
    }
  }

  func stream(
    _ stream: Int32, received bytes: UnsafeRawBufferPointer, endStream: Bool, session: any HTTP2StreamSink
  ) {
    guard let call = streams[stream] else { return }
    if endStream { call.requestEnded = true }
    guard call.phase != .done, call.phase == .receiving || call.incoming != nil else { return }
    let messages: [GRPCMessage]
    do {
      messages = try call.deframer.append(bytes)
    } catch {
      refuse(
        call,
        GRPCStatus(
          .resourceExhausted, "a message of \(error.length) bytes is over the limit of \(error.limit)"))
      return
    }
    for message in messages {
      guard message.flags == 0 else {
        // No grpc-encoding other than identity gets this far.
        refuse(
          call,
          GRPCStatus(
            .internalError,
            message.flags == 1
              ? "a compressed message without grpc-encoding" : "a message prefix flag of \(message.flags)"))
        return
      }
      if call.incoming != nil {
        if call.drainWaiter != nil || !call.heldMessages.isEmpty {
          // An answer waits for the peer's window: this message waits too, still charged.
          guard call.heldMessages.count < Self.maxQueuedMessages else {
            refuse(call, Self.tooManyUnread)
            return
          }
          call.heldMessages.append(message.bytes)
        } else if !deliver(message.bytes, to: call, session: session) {
          return
        }
      } else if call.request == nil {
        call.request = message.bytes
      } else {
        finish(call, GRPCStatus(.internalError, "more than one request message for a unary method"))
        return
      }
    }
    guard endStream else { return }
    if call.deframer.isMidMessage {
      refuse(call, GRPCStatus(.internalError, "the request ended inside a message"))
    } else if let incoming = call.incoming {
      if call.heldMessages.isEmpty { incoming.finish() }  // else once they are delivered
    } else if call.phase == .receiving {
      if let request = call.request {
        call.request = nil
        startUnary(call, payload: request, session: session)
      } else {
        finish(call, GRPCStatus(.internalError, "the request ended without a message"))
      }
    }
  }

  func streamClosed(_ stream: Int32, errorCode: UInt32, session: any HTTP2StreamSink) {
    guard let call = streams.removeValue(forKey: stream) else { return }
    call.incoming?.finish()
    call.heldMessages = []
    resumeSender(call, sent: false)
    // A reset by the peer, or the connection's end: the call is cancelled, never
    // answered. An answered call is no longer in flight, and this does nothing.
    if call.phase == .running { session.calls.cancel(id: UInt64(stream)) }
  }

  /// The stream's queued answer drained: the waiting `send` returns, and the messages
  /// held meanwhile go to the method.
  func streamDrained(_ stream: Int32, session: any HTTP2StreamSink) {
    guard let call = streams[stream], call.phase == .running else { return }
    resumeSender(call, sent: true)
    let held = call.heldMessages
    call.heldMessages = []
    for message in held {
      guard deliver(message, to: call, session: session) else { return }
    }
    if call.requestEnded { call.incoming?.finish() }
  }

  /// Hands one request message to a local method; false when its stream was refused.
  private func deliver(_ message: [UInt8], to call: GRPCStreamCall, session: any HTTP2StreamSink) -> Bool {
    guard let incoming = call.incoming else { return false }
    if case .dropped = incoming.yield(message) {
      refuse(call, Self.tooManyUnread)
      return false
    }
    session.messagesTaken(call.id, bytes: GRPCMessageDeframer.prefixBytes + message.count)
    return true
  }

  private static let tooManyUnread = GRPCStatus(
    .resourceExhausted, "more than \(maxQueuedMessages) messages not yet read")

  private func resumeSender(_ call: GRPCStreamCall, sent: Bool) {
    guard let waiter = call.drainWaiter else { return }
    call.drainWaiter = nil
    waiter.resume(returning: sent)
  }

  // MARK: Router calls

  private func startUnary(_ call: GRPCStreamCall, payload: [UInt8], session: any HTTP2StreamSink) {
    call.phase = .running
    let id = call.id
    let bound = LoopBound(self, loop: session.calls.loop)
    let admission = session.calls.startCall(
      id: UInt64(id), method: call.head.path, metadata: call.head.metadata, requestID: call.requestID,
      timeoutMs: remainingMs(call), payload: payload,
      authenticated: { credential in
        guard credential == .adminKey else { return }
        bound.execute { $0.largeMessages = true }
      },
      answer: { [weak self] result in self?.answerUnary(id, result) })
    admitted(call, admission)
  }

  /// What is left of the client's `grpc-timeout` (its deadline counts from the header
  /// block, not from the end of the request); 0, the server's default, when it sent none.
  private func remainingMs(_ call: GRPCStreamCall) -> UInt32 {
    guard let timeout = call.head.timeoutNanos else { return 0 }
    let elapsed = MonotonicClock.now() &- call.openedAt
    return GRPCTimeout.milliseconds(fromNanos: timeout > elapsed ? timeout - elapsed : 0)
  }

  private func answerUnary(_ id: Int32, _ result: Result<[UInt8], RPCError>) {
    guard let call = streams[id], call.phase == .running, let sink else { return }
    switch result {
    case .success(let payload):
      call.phase = .done
      sink.sendHeaders(id, GRPCStatus.responseHeaders(requestID: call.requestID), endStream: false)
      sink.sendData(id, GRPCMessageDeframer.frame(payload), endStream: false)
      sink.sendTrailers(id, Self.okTrailers)
    case .failure(let error):
      finish(call, GRPCStatus(error))
    }
  }

  private func admitted(_ call: GRPCStreamCall, _ admission: ConnectionCalls.Admission) {
    switch admission {
    case .admitted:
      break
    case .idInUse:  // HTTP/2 never reuses a stream id; kept an answer all the same
      finish(call, GRPCStatus(.internalError, "stream \(call.id) is already in flight"))
    case .refused(let error):
      finish(call, GRPCStatus(error))
    }
  }

  // MARK: Local methods

  private func startLocal(_ call: GRPCStreamCall, method: any GRPCLocalMethod, session: any HTTP2StreamSink) {
    call.phase = .running
    call.deframer.limit = min(call.deframer.limit, Self.maxLocalMessageBytes)
    let (requests, incoming) = AsyncStream<[UInt8]>.makeStream(
      bufferingPolicy: .bufferingOldest(Self.maxQueuedMessages))
    call.incoming = incoming
    if call.requestEnded { incoming.finish() }
    let id = call.id
    let bound = LoopBound(self, loop: session.calls.loop)
    let config = session.calls.core.config
    let responses = GRPCResponseWriter { message in
      await Self.send(GRPCMessageDeframer.frame(message), on: id, through: bound)
    }
    let timeoutNanos: UInt64?
    if let asked = call.head.timeoutNanos {
      // Clamped to the unary ceiling (UInt32.max ms): `99999999H` is UInt64.max ns.
      timeoutNanos = min(max(asked, config.minCallTimeoutMs * 1_000_000), UInt64(UInt32.max) * 1_000_000)
    } else {
      timeoutNanos = method.hasDefaultDeadline ? config.defaultCallTimeoutMs * 1_000_000 : nil
    }
    let admission = session.calls.startTask(
      id: UInt64(id), payloadBytes: 0, timeoutNanos: timeoutNanos,
      work: { await method.run(requests: requests, responses: responses) },
      answer: { [weak self] (status: GRPCFinalStatus) in
        self?.answerLocal(id, GRPCStatus(status.code, status.message))
      },
      expired: { [weak self] in
        self?.answerLocal(id, GRPCStatus(.deadlineExceeded, "the call's deadline passed"))
      })
    admitted(call, admission)
  }

  private func answerLocal(_ id: Int32, _ status: GRPCStatus) {
    guard let call = streams[id], call.phase == .running else { return }
    call.incoming?.finish()
    finish(call, status)
  }

  /// Queues one framed response message of a local method (HEADERS first, with the
  /// first one), then resumes `waiter` once the message has left the stream's queue
  /// (at once when the session took it all), or with false when the stream is gone.
  private func queue(_ framed: [UInt8], on id: Int32, waiter: CheckedContinuation<Bool, Never>) {
    guard let call = streams[id], call.phase == .running, call.drainWaiter == nil, let sink else {
      waiter.resume(returning: false)
      return
    }
    if !call.responseStarted {
      call.responseStarted = true
      sink.sendHeaders(id, GRPCStatus.responseHeaders(requestID: call.requestID), endStream: false)
    }
    sink.sendData(id, framed, endStream: false)
    if sink.notifyWhenDrained(id) {
      call.drainWaiter = waiter
    } else {
      waiter.resume(returning: true)
    }
  }

  /// `GRPCResponseWriter.send`, off the loop: queues the message and waits, at no cost,
  /// for the session's drain event, so a stream has at most one answer outstanding and
  /// a peer that keeps its window closed holds one answer per stream. False once the
  /// stream is gone or its call answered (the session resets a waiting stream whose
  /// queue has not moved for the idle timeout, so a peer that never opens its window
  /// cannot keep a `Watch` or reflection stream, and its queued output, for ever).
  private static func send(_ framed: [UInt8], on id: Int32, through bound: LoopBound<GRPCStreamHandler>) async
    -> Bool
  {
    guard !Task.isCancelled else { return false }
    return await withCheckedContinuation { continuation in
      bound.execute { $0.queue(framed, on: id, waiter: continuation) }
    }
  }

  // MARK: Answers

  /// A client's header value as an error message repeats it: at most 64 Unicode scalars
  /// (a header may be kilobytes long; the message only names what was refused).
  static func echo(_ value: String) -> String {
    value.unicodeScalars.count <= 64
      ? value : String(String.UnicodeScalarView(value.unicodeScalars.prefix(64))) + "..."
  }

  /// Ends the call with `status`: in trailers when response headers went out, else as a
  /// trailers-only answer. A client still sending is not reset (grpc-go sends RST_STREAM
  /// NO_ERROR here): libnghttp2 drops a stream's queued HEADERS once RST_STREAM is
  /// submitted for it, so the answer would be lost. Its further bytes are dropped; the
  /// stream closes when the client ends it (gRPC clients do on the answer), or at the
  /// session's unfinished-body timeout.
  private func finish(
    _ call: GRPCStreamCall, _ status: GRPCStatus, httpStatus: Int = 200, extra: [HTTP2Header] = []
  ) {
    guard call.phase != .done, let sink else { return }
    call.phase = .done
    call.incoming?.finish()
    call.heldMessages = []
    resumeSender(call, sent: false)
    if call.responseStarted {
      sink.sendTrailers(call.id, status.fields)
      return
    }
    sink.sendHeaders(
      call.id, status.trailersOnly(requestID: call.requestID, httpStatus: httpStatus, extra: extra),
      endStream: true)
  }

  /// The request broke gRPC's framing or a limit while a call may be running: answered,
  /// and a running call cancelled.
  private func refuse(_ call: GRPCStreamCall, _ status: GRPCStatus) {
    let running = call.phase == .running
    finish(call, status)
    if running { sink?.calls.cancel(id: UInt64(call.id)) }
  }
}
