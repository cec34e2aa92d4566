import AnonAuthNet
import CNghttp2

/// The server side of one HTTP/2 connection (ALPN `h2`, docs/protocol.md §1): a
/// libnghttp2 server session driven by the connection's loop, with received bytes fed
/// through `nghttp2_session_mem_recv` and the session's output taken with
/// `nghttp2_session_mem_send` once per loop turn (no threads of its own). Each request
/// stream goes to a handler chosen by its content type: gRPC (`application/grpc...`) or
/// the Firebase JSON API; the handlers run their calls through the connection's
/// `ConnectionCalls`, so slots, budgets and deadlines are those of every transport.
///
/// Limits: HTTP2SessionLimits (settings, and libnghttp2's flood and reset options);
/// request bodies being received are charged to the receive budgets like partial
/// frames, and so are answers queued for the peer (`outputBudget`): over a budget, or
/// over `maxQueuedOutputBytes` on this connection, new streams are refused and no
/// window is given back until the output drains (`HTTP2OutputBudget`). Output is taken
/// from the session only while the socket's queue is under its high watermark, and
/// again when the socket reports it drained: nothing is polled.
final class HTTP2ServerConnection: ByteStreamDelegate, ServedConnection, HTTP2StreamSink {
  let stream: any ByteStream
  let calls: ConnectionCalls
  private let core: ServerCore
  private weak var registry: ConnectionRegistry?
  private var session: OpaquePointer?
  private var streams: [Int32: HTTP2StreamState] = [:]
  /// Request bodies being received, charged like partial frames.
  private let held: ReceiveBudget.Account
  /// Answers queued for the peer and not yet taken by the session (its window is
  /// closed), charged to the same budgets.
  private var outputBudget: HTTP2OutputBudget
  /// Streams refused at once (header lists over the limit, streams refused while the
  /// output is over budget, bodies over the receive budget): past the bucket, the
  /// connection is ended (GOAWAY ENHANCE_YOUR_CALM).
  private var refusals = HTTP2RefusalBucket()
  /// A refused header block is still being decoded (by the session, into nothing): it
  /// has ended once any later frame arrives.
  private var refusedBlockPending = false
  /// GOAWAY ENHANCE_YOUR_CALM was submitted: the connection is ending.
  private var calmed = false
  /// Body bytes of streams closed since they arrived over the output budget: the
  /// connection's window for them is given back with the streams'.
  private var unconsumedClosed = 0
  private let startedAt: UInt64
  /// The client preface (its SETTINGS frame) arrived: the handshake is over.
  private var prefaceReceived = false
  /// A header block begun and not finished (CONTINUATION pending): since when.
  private var headerBlockSince: UInt64?
  /// The timeouts' clocks and the drain state.
  private var lifecycle: ConnectionLifecycle
  var goingAway: Bool { lifecycle.isDraining }
  private var finalGoAwaySent = false
  private var closing: Bool { lifecycle.isClosing }
  private var flushScheduled = false
  /// Inside `stream(_:didReceive:)`: output is flushed when it returns.
  private var receiving = false
  /// The request stream whose header block is arriving (between `beginHeaders` and its
  /// HEADERS frame), so each header field finds it without a lookup in `streams`.
  private var headerBlockState: HTTP2StreamState?
  private lazy var jsonHandler = HTTP2JSONStreamHandler(core: core)
  private var grpcHandler: (any HTTP2StreamHandler)?

  init(stream: any ByteStream, core: ServerCore, registry: ConnectionRegistry?) {
    self.stream = stream
    stream.readBudgetBytes = HTTP2SessionLimits.readBudgetBytes
    self.core = core
    self.registry = registry
    startedAt = MonotonicClock.now()
    lifecycle = ConnectionLifecycle(config: core.config)
    calls = ConnectionCalls(
      core: core, loop: stream.loop, peerHost: stream.peer?.host,
      clientCertificateName: stream.verifiedPeerName)
    held = core.receiveBudget.account(for: stream.peer?.host)
    outputBudget = HTTP2OutputBudget(account: core.receiveBudget.account(for: stream.peer?.host))
    calls.onAllEnded = { [weak self] in self?.closeIfDone() }
    startSession()
    flush()  // the server's preface (SETTINGS) goes out at once
  }

  deinit {
    if let session { nghttp2_session_del(session) }
  }

  private func startSession() {
    guard let callbacks = HTTP2Callbacks.make() else { return }
    defer { nghttp2_session_callbacks_del(callbacks) }
    let option = HTTP2SessionLimits.makeOption()
    defer { if let option { nghttp2_option_del(option) } }
    var made: OpaquePointer?
    let userData = Unmanaged.passUnretained(self).toOpaque()
    // Its own allocator: the outbound frame buffer on pages that stay untouched while
    // the connection only sends small frames (`HTTP2SessionMemory`).
    var memory = HTTP2SessionMemory.allocator
    guard nghttp2_session_server_new3(&made, callbacks, userData, option, &memory) == 0, let made else {
      return
    }
    session = made
    var settings = HTTP2SessionLimits.settings(
      maxConcurrentStreams: core.config.maxConcurrentCallsPerConnection)
    _ = nghttp2_submit_settings(made, UInt8(NGHTTP2_FLAG_NONE.rawValue), &settings, settings.count)
    _ = nghttp2_session_set_local_window_size(
      made, UInt8(NGHTTP2_FLAG_NONE.rawValue), 0, HTTP2SessionLimits.connectionWindowSize)
  }

  var peerHost: String? { stream.peer?.host }
  var clientCertificateName: String? { stream.verifiedPeerName }

  /// Streams open now (for tests).
  var openStreamCount: Int { streams.count }

  // MARK: ByteStreamDelegate

  func stream(_ stream: any ByteStream, didReceive bytes: UnsafeRawBufferPointer) {
    guard let session, !closing, let base = bytes.baseAddress, !bytes.isEmpty else { return }
    receiving = true
    let used = nghttp2_session_mem_recv(session, base.assumingMemoryBound(to: UInt8.self), bytes.count)
    receiving = false
    if used < 0 {
      // A protocol error: libnghttp2 has queued its GOAWAY where it could.
      core.logger.warning(
        "http2 session ended",
        ["reason": .string(String(cString: nghttp2_strerror(Int32(used)))), "peer": .string(peerDescription)])
      flush()
      closeGracefully()
      return
    }
    flush()
  }

  func streamDidClose(_ stream: any ByteStream, error: (any Error)?) {
    let open = streams
    streams.removeAll()
    for (id, state) in open.sorted(by: { $0.key < $1.key }) {
      state.handler?.streamClosed(id, errorCode: NGHTTP2_CANCEL.rawValue, session: self)
    }
    calls.cancelAll()
    held.release()
    outputBudget.release()
    if let session {
      nghttp2_session_del(session)
      self.session = nil
    }
    _ = lifecycle.beginClosing()
    registry?.remove(self)
    core.connectionClosed(heldPeakBytes: outputBudget.peak + held.peak)
  }

  /// The socket's queue went back under its low watermark: the session's output, held
  /// back while it was over, moves now (the event replaces a retry timer).
  func streamOutputDrained(_ stream: any ByteStream) {
    flush()
  }

  private var peerDescription: String { stream.peer?.description ?? "" }

  // MARK: Output

  /// Takes the session's output once, at the end of this loop turn.
  private func scheduleFlush() {
    guard !receiving, !flushScheduled, !closing else { return }
    flushScheduled = true
    stream.loop.atEndOfIteration { [weak self] in
      self?.flushScheduled = false
      self?.flush()
    }
  }

  /// Moves what the session has to send into the socket's queue, unless that queue is
  /// over its high watermark (the peer is not reading): then it waits for the socket's
  /// `streamOutputDrained`, so the session's own bounds (flow-control windows, the
  /// outbound ack limit) and the output budget are what a slow reader can make the
  /// server hold, at no cost while it waits.
  private func flush() {
    guard let session, stream.isOpen else { return }
    // The session hands its output over frame by frame: gathered, and queued once per
    // `gatherBytes` (an answer's HEADERS, DATA and trailers are one allocation, not
    // three). The watermark is checked before each piece, not once per flush: one flush
    // may otherwise move everything the session has (every stream's window) into the
    // socket's queue.
    var output: [UInt8] = []
    while !stream.readPaused {
      var data: UnsafePointer<UInt8>?
      let count = nghttp2_session_mem_send(session, &data)
      if count < 0 {
        if !output.isEmpty { stream.send(bytes: output) }
        closeGracefully()
        return
      }
      guard count > 0, let data else { break }
      if output.isEmpty { output.reserveCapacity(max(count, Self.typicalOutputBytes)) }
      output.append(contentsOf: UnsafeBufferPointer(start: data, count: count))
      if output.count >= Self.gatherBytes {
        stream.send(bytes: output)
        output = []
      }
    }
    if !output.isEmpty { stream.send(bytes: output) }
    if stream.readPaused { return }
    if nghttp2_session_want_read(session) == 0 && nghttp2_session_want_write(session) == 0 {
      closeGracefully()
      return
    }
    closeIfDone()
  }

  private func closeGracefully() {
    guard lifecycle.beginClosing() else { return }
    stream.closeGracefully()
  }

  /// After the final GOAWAY: closes once no stream is open and no call's task runs.
  private func closeIfDone() {
    guard finalGoAwaySent, !closing, streams.isEmpty, calls.taken == 0 else { return }
    closeGracefully()
  }

  // MARK: Session callbacks (loop thread, inside mem_recv/mem_send)

  func beginHeaders(_ frame: nghttp2_frame) -> Int32 {
    guard frame.hd.type == UInt8(NGHTTP2_HEADERS.rawValue) else { return 0 }
    refusedBlockPending = false
    headerBlockSince = MonotonicClock.now()
    guard frame.headers.cat == NGHTTP2_HCAT_REQUEST else { return 0 }
    let state = HTTP2StreamState(id: frame.hd.stream_id)
    streams[frame.hd.stream_id] = state
    headerBlockState = state
    return 0
  }

  func header(_ frame: nghttp2_frame, name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>)
    -> Int32
  {
    guard frame.hd.type == UInt8(NGHTTP2_HEADERS.rawValue), frame.headers.cat == NGHTTP2_HCAT_REQUEST,
      let state = headerBlockState, state.id == frame.hd.stream_id
    else { return 0 }  // request trailers are dropped
    guard !state.refused else { return 0 }
    state.headerListBytes += name.count + value.count + 32
    if state.headerListBytes > HTTP2SessionLimits.maxHeaderListBytes
      || state.headers.count >= HTTP2SessionLimits.maxHeaderCount
    {
      return refuseHeaderList(state)
    }
    // Room for a typical request's fields at once, not grown 1, 2, 4, 8, 16 (an
    // allocation and a copy each); the block is handed on when complete.
    if state.headers.isEmpty { state.headers.reserveCapacity(Self.typicalHeaderCount) }
    state.headers.append(
      HTTP2Header(String(decoding: name, as: UTF8.self), String(decoding: value, as: UTF8.self)))
    return 0
  }

  /// A header list went over the limit: answered 431 now, and the session is told to
  /// decode the rest of the block into nothing (the callback's temporal failure: no
  /// field is validated, copied or handed here, only the HPACK table kept in step), so
  /// the block costs its bytes, not what it expands to. The session then resets the
  /// stream (INTERNAL_ERROR) behind the 431, which is already in the socket's queue
  /// (`HTTP2RefusalFrame`). A connection that keeps doing it is ended.
  private func refuseHeaderList(_ state: HTTP2StreamState) -> Int32 {
    state.refused = true
    state.headers = []
    state.responseStarted = true
    state.outputEnded = true
    headerBlockState = nil
    refusedBlockPending = true
    core.metrics.http2HeaderListsRefused.add(1, ordering: .relaxed)
    stream.send(bytes: HTTP2RefusalFrame.headerListTooLarge(stream: state.id))
    noteRefusal()
    return Int32(NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE.rawValue)
  }

  /// Counts a stream refused at once and deprioritizes the connection
  /// (`ByteStream.deprioritized`); past the bucket, GOAWAY ENHANCE_YOUR_CALM (the
  /// connection closes once it is sent).
  private func noteRefusal() {
    // From its first refused stream on, the connection is served after the loop's others.
    stream.deprioritized = true
    guard !refusals.take(now: MonotonicClock.now()), let session, !calmed else { return }
    calmed = true
    core.metrics.http2ConnectionsCalmed.add(1, ordering: .relaxed)
    registry?.limiter.penalize(peerHost, connections: HTTP2SessionLimits.calmedConnectionCost)
    _ = nghttp2_session_terminate_session(session, NGHTTP2_ENHANCE_YOUR_CALM.rawValue)
    scheduleFlush()
  }

  /// Room first taken for a flush's output: a small answer's frames, all of them.
  static let typicalOutputBytes = 512
  /// Output gathered before it is queued on the socket (and the watermark looked at
  /// again): one full DATA frame.
  static let gatherBytes = 16 * 1024

  /// Header fields a gRPC or JSON request usually has (pseudo-headers included).
  static let typicalHeaderCount = 16

  func frameReceived(_ frame: nghttp2_frame) -> Int32 {
    let id = frame.hd.stream_id
    let endStream = frame.hd.flags & UInt8(NGHTTP2_FLAG_END_STREAM.rawValue) != 0
    if refusedBlockPending {
      // A frame after a refused header block: that block has ended.
      refusedBlockPending = false
      headerBlockSince = nil
    }
    switch UInt32(frame.hd.type) {
    case NGHTTP2_SETTINGS.rawValue:
      prefaceReceived = true
    case NGHTTP2_HEADERS.rawValue:
      headerBlockSince = nil
      let block = headerBlockState
      headerBlockState = nil
      guard let state = block?.id == id ? block : streams[id] else { return 0 }
      if frame.headers.cat == NGHTTP2_HCAT_REQUEST {
        open(state, endStream: endStream)
      } else if endStream {
        bodyEnded(state)
      }
    case NGHTTP2_DATA.rawValue:
      if endStream, let state = streams[id] { bodyEnded(state) }
    default:
      break
    }
    return 0
  }

  /// A request's header block is complete: chooses its handler.
  private func open(_ state: HTTP2StreamState, endStream: Bool) {
    let id = state.id
    if state.refused { return }
    if outputBudget.over {
      // Answers already wait for this peer past its budget: no new work until they
      // drain. REFUSED_STREAM tells the client nothing was done (gRPC retries it).
      core.metrics.http2StreamsRefusedOverOutputBudget.add(1, ordering: .relaxed)
      resetStream(id, errorCode: NGHTTP2_REFUSED_STREAM.rawValue)
      noteRefusal()
      return
    }
    let headers = state.headers
    state.headers = []
    state.bodySince = endStream ? nil : MonotonicClock.now()
    let handler = handler(for: headers)
    state.handler = handler
    handler.streamOpened(id, headers: headers, endStream: endStream, session: self)
  }

  private func handler(for headers: [HTTP2Header]) -> any HTTP2StreamHandler {
    let contentType = headers.first { $0.name == "content-type" }?.value ?? ""
    guard Self.isGRPC(contentType: contentType) else { return jsonHandler }
    if let grpcHandler { return grpcHandler }
    let made: any HTTP2StreamHandler = core.makeGRPCHandler?() ?? HTTP2UnimplementedGRPCHandler()
    grpcHandler = made
    return made
  }

  /// `application/grpc`, or `application/grpc+<codec>`, with any parameters.
  static func isGRPC(contentType: String) -> Bool {
    // What gRPC clients send, matched without making the lowercased copy below.
    if contentType == "application/grpc" { return true }
    let type = (contentType.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
      .lowercased().filter { $0 != " " && $0 != "\t" }
    return type == "application/grpc" || type.hasPrefix("application/grpc+")
  }

  func dataReceived(_ id: Int32, _ bytes: UnsafeRawBufferPointer) -> Int32 {
    guard let session else { return 0 }
    let state = streams[id]
    defer {
      // Over the output budget no window is given back: the peer cannot send more
      // until its answers drain.
      if outputBudget.over {
        if let state { state.unconsumed += bytes.count } else { unconsumedClosed += bytes.count }
      } else {
        _ = nghttp2_session_consume(session, id, bytes.count)
      }
    }
    guard let state, let handler = state.handler, state.bodySince != nil else { return 0 }
    // Answered already (413...): the rest of the body is dropped as it comes, not held.
    // `bodySince` stays where the body started: bytes trickled in do not restart the
    // partial-frame timeout (slowloris), as on the other transports.
    guard !state.outputEnded, !state.bodyRefused else { return 0 }
    state.bodyHeld += bytes.count
    guard held.resize(to: held.charged + bytes.count) else {
      state.bodyHeld -= bytes.count
      state.bodyRefused = true
      core.metrics.connectionsOverBufferBudget.add(1, ordering: .relaxed)
      resetStream(id, errorCode: NGHTTP2_ENHANCE_YOUR_CALM.rawValue)
      noteRefusal()
      return 0
    }
    handler.stream(id, received: bytes, endStream: false, session: self)
    return 0
  }

  func messagesTaken(_ id: Int32, bytes: Int) {
    guard let state = streams[id], state.bodySince != nil else { return }
    let released = min(bytes, state.bodyHeld)
    state.bodyHeld -= released
    _ = held.resize(to: held.charged - released)
    state.bodySince = MonotonicClock.now()
  }

  private func bodyEnded(_ state: HTTP2StreamState) {
    guard state.bodySince != nil, let handler = state.handler else { return }
    releaseBody(state)
    handler.stream(
      state.id, received: UnsafeRawBufferPointer(start: nil, count: 0), endStream: true, session: self)
  }

  private func releaseBody(_ state: HTTP2StreamState) {
    state.bodySince = nil
    if state.bodyHeld > 0 {
      _ = held.resize(to: held.charged - state.bodyHeld)
      state.bodyHeld = 0
    }
  }

  func streamClosed(_ id: Int32, errorCode: UInt32) -> Int32 {
    guard let state = streams.removeValue(forKey: id) else { return 0 }
    if headerBlockState === state { headerBlockState = nil }
    releaseBody(state)
    unconsumedClosed += state.unconsumed
    outputChanged(-state.pendingOutput)
    state.handler?.streamClosed(id, errorCode: errorCode, session: self)
    // A draining connection may close now: `flush`, which follows every call into the
    // session, checks.
    return 0
  }

  func readBody(_ id: Int32, into buffer: UnsafeMutableRawBufferPointer, flags: UnsafeMutablePointer<UInt32>)
    -> Int
  {
    guard let state = streams[id] else { return Int(NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE.rawValue) }
    let count = min(buffer.count, state.pendingOutput)
    if count > 0 {
      state.output.withUnsafeBytes { source in
        buffer.copyMemory(
          from: UnsafeRawBufferPointer(rebasing: source[state.outputOffset..<state.outputOffset + count]))
      }
      state.outputOffset += count
      if state.outputOffset == state.output.count {
        state.output.removeAll(keepingCapacity: false)
        state.outputOffset = 0
      }
      state.outputProgressAt = MonotonicClock.now()
      outputChanged(-count)
      if state.pendingOutput == 0 && state.drainWaited, let handler = state.handler {
        state.drainWaited = false
        handler.streamDrained(id, session: self)
      }
    }
    if state.pendingOutput == 0 && state.outputEnded {
      flags.pointee |= NGHTTP2_DATA_FLAG_EOF.rawValue
      if let trailers = state.trailers, let session {
        flags.pointee |= NGHTTP2_DATA_FLAG_NO_END_STREAM.rawValue
        state.trailers = nil
        _ = withHeaderList(trailers) { list, count in nghttp2_submit_trailer(session, id, list, count) }
      }
      return count
    }
    if count == 0 {
      state.deferred = true
      return Int(NGHTTP2_ERR_DEFERRED.rawValue)
    }
    return count
  }

  // MARK: HTTP2StreamSink

  func sendHeaders(_ id: Int32, _ headers: [HTTP2Header], endStream: Bool) {
    guard let session, let state = streams[id], !state.responseStarted else { return }
    state.responseStarted = true
    state.outputEnded = endStream
    if endStream {
      _ = withHeaderList(headers) { list, count in nghttp2_submit_response(session, id, list, count, nil) }
    } else {
      var provider = nghttp2_data_provider(
        source: nghttp2_data_source(ptr: nil), read_callback: HTTP2Callbacks.readBody)
      _ = withHeaderList(headers) { list, count in
        nghttp2_submit_response(session, id, list, count, &provider)
      }
    }
    scheduleFlush()
  }

  func sendData(_ id: Int32, _ bytes: [UInt8], endStream: Bool) {
    guard let state = streams[id], state.responseStarted, !state.outputEnded else { return }
    if state.pendingOutput == 0 { state.outputProgressAt = MonotonicClock.now() }
    outputChanged(bytes.count)
    // Nothing queued (a unary answer's one message): the array is kept as it is, not copied.
    if state.output.isEmpty {
      state.output = bytes
      state.outputOffset = 0
    } else {
      state.output.append(contentsOf: bytes)
    }
    if endStream { state.outputEnded = true }
    resume(state)
  }

  func sendTrailers(_ id: Int32, _ trailers: [HTTP2Header]) {
    guard let state = streams[id], state.responseStarted, !state.outputEnded else { return }
    state.trailers = trailers
    state.outputEnded = true
    resume(state)
  }

  private func resume(_ state: HTTP2StreamState) {
    if state.deferred, let session {
      state.deferred = false
      _ = nghttp2_session_resume_data(session, state.id)
    }
    scheduleFlush()
  }

  func resetStream(_ id: Int32, errorCode: UInt32) {
    guard let session, streams[id] != nil else { return }
    _ = nghttp2_submit_rst_stream(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), id, errorCode)
    scheduleFlush()
  }

  func pendingBytes(_ id: Int32) -> Int { streams[id]?.pendingOutput ?? 0 }

  func streamRefusedAtOnce(_ id: Int32) { noteRefusal() }

  func notifyWhenDrained(_ id: Int32) -> Bool {
    guard let state = streams[id], state.pendingOutput > 0 else { return false }
    state.drainWaited = true
    return true
  }

  // MARK: Output budget

  /// Charges queued output, and starts or stops taking work from the peer.
  private func outputChanged(_ delta: Int) {
    switch outputBudget.add(delta, now: MonotonicClock.now()) {
    case .wentOver: core.metrics.http2OutputOverBudget.add(1, ordering: .relaxed)
    case .cameBack: scheduleWindowsBack()
    case nil: break
    }
  }

  /// Gives back, at the end of this turn (not from inside the session's callbacks), the
  /// window of every body byte received while the output was over its budget.
  private func scheduleWindowsBack() {
    stream.loop.atEndOfIteration { [weak self] in
      guard let self, let session = self.session, !self.outputBudget.over else { return }
      for state in self.streams.values where state.unconsumed > 0 {
        _ = nghttp2_session_consume(session, state.id, state.unconsumed)
        state.unconsumed = 0
      }
      if self.unconsumedClosed > 0 {
        _ = nghttp2_session_consume_connection(session, self.unconsumedClosed)
        self.unconsumedClosed = 0
      }
      self.flush()
    }
  }

  // MARK: ServedConnection

  /// Graceful shutdown: a GOAWAY shutdown notice now (the peer stops opening streams),
  /// the final GOAWAY naming the last stream served a moment later (streams the peer
  /// opened meanwhile are still served), then close once every stream has ended.
  func drain() {
    guard let session, lifecycle.beginDraining() else { return }
    _ = nghttp2_submit_shutdown_notice(session)
    flush()
    _ = stream.loop.schedule(afterNanos: 1_000_000_000) { [weak self] in self?.sendFinalGoAway() }
  }

  private func sendFinalGoAway() {
    guard let session, !finalGoAwaySent, !closing else { return }
    finalGoAwaySent = true
    // Only now are new calls refused: streams that raced the notice are served.
    calls.drain()
    _ = nghttp2_submit_goaway(
      session, UInt8(NGHTTP2_FLAG_NONE.rawValue), nghttp2_session_get_last_proc_stream_id(session),
      NGHTTP2_NO_ERROR.rawValue, nil, 0)
    flush()
  }

  func closeNow() { stream.close(error: nil) }

  /// Handshake (the client preface), stalled header blocks and request bodies (the
  /// partial-frame timeout), and idle (no call waiting for its answer): GOAWAY and close.
  func checkTimeouts(now: UInt64) {
    guard session != nil, stream.isOpen, !closing else { return }
    if stream.readPaused {
      // The peer's bytes are not being read: its unfinished requests are not late.
      if headerBlockSince != nil { headerBlockSince = now }
      for state in streams.values where state.bodySince != nil { state.bodySince = now }
    }
    switch lifecycle.expiry(
      now: now, handshakeSince: prefaceReceived ? nil : startedAt, partialSince: headerBlockSince,
      lastActivity: stream.lastActivity, idle: false)
    {
    case .handshake:
      closeGracefully()
      return
    case .partialRequest:
      // A header block begun and never finished.
      terminate(NGHTTP2_ENHANCE_YOUR_CALM.rawValue)
      return
    case .idle, nil:
      if !prefaceReceived { return }
    }
    for state in streams.values.sorted(by: { $0.id < $1.id }) {
      // An answer waits for the peer's window: the peer is not reading, and what it sent
      // meanwhile waits for that answer, so its body is not late (the stall rule below
      // bounds the wait).
      if state.drainWaited, state.bodySince != nil { state.bodySince = now }
      if let since = state.bodySince, lifecycle.partialExpired(since: since, now: now) {
        releaseBody(state)
        resetStream(state.id, errorCode: NGHTTP2_CANCEL.rawValue)
      }
      // A streaming method waits for this stream's window, which has not moved for the
      // idle timeout: reset (CANCEL), which drops its queued output and ends the call.
      if state.drainWaited, state.pendingOutput > 0,
        lifecycle.idleExpired(since: state.outputProgressAt, now: now)
      {
        state.drainWaited = false
        resetStream(state.id, errorCode: NGHTTP2_CANCEL.rawValue)
      }
    }
    if outputBudget.recheck() == .cameBack { scheduleWindowsBack() }
    if outputBudget.over, lifecycle.partialExpired(since: outputBudget.progressAt, now: now) {
      // Over its output budget, and nothing drained for the frame timeout.
      core.metrics.http2ConnectionsCalmed.add(1, ordering: .relaxed)
      terminate(NGHTTP2_ENHANCE_YOUR_CALM.rawValue)
      return
    }
    if calls.unanswered == 0, lifecycle.idleExpired(since: stream.lastActivity, now: now) {
      terminate(NGHTTP2_NO_ERROR.rawValue)
    }
  }

  /// GOAWAY with `errorCode`, what the session has flushed, and close.
  private func terminate(_ errorCode: UInt32) {
    guard let session else { return }
    _ = nghttp2_session_terminate_session(session, errorCode)
    flush()
    closeGracefully()
  }
}
