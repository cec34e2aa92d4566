import AnonAuthNet
import AnonAuthWire
import CNghttp2

/// One HTTP/2 connection of the gRPC client: TLS (ALPN `h2`) in byte mode under a
/// libnghttp2 client session driven through its memory API on the client's event loop,
/// so many calls share the connection as concurrent streams with no thread of their own.
/// Loop-confined: every method runs on `tls.loop`.
final class GRPCConnection: TLSHandshakeDelegate, ByteStreamDelegate {
  typealias Completion = @Sendable (Result<[UInt8], ClientCallFailure>) -> Void

  /// One call in flight.
  private final class Stream {
    let completion: Completion
    let request: [UInt8]
    /// A plain HTTP/2 request (not gRPC): its body is kept as it comes, at most the
    /// message limit, and answers the call when `:status` is 200.
    let plain: Bool
    var plainBody: [UInt8] = []
    var sentBytes = 0
    var timer: UInt64 = 0
    var fields: [String: String] = [:]
    var body: GRPCMessageReader

    init(completion: @escaping Completion, request: [UInt8], plain: Bool, maxMessageSize: Int) {
      self.completion = completion
      self.request = request
      self.plain = plain
      self.body = GRPCMessageReader(maxMessageSize: maxMessageSize)
    }
  }

  static let applicationProtocol = "h2"

  let tls: TLSConnection
  private let authority: String
  private let flags: ConnectionFlags
  private let maxMessageSize: Int
  private var session: OpaquePointer?
  private var streams: [Int32: Stream] = [:]
  /// True once TLS chose `h2` and bytes flow; requests submitted before wait in nghttp2.
  private var ready = false
  private var goingAway = false
  private var closed = false
  /// The connection keeps itself alive until its TLS connection has closed: the client
  /// drops its handle to a connection that is going away while other calls may still be
  /// in flight on it, and the TLS connection holds its delegates weakly, so without this
  /// those calls would never complete. Cleared when the close is reported.
  private var keepAlive: GRPCConnection?

  init(tls: TLSConnection, authority: String, flags: ConnectionFlags, maxMessageSize: Int) {
    self.tls = tls
    self.authority = authority
    self.flags = flags
    self.maxMessageSize = maxMessageSize
  }

  deinit {
    if let session { nghttp2_session_del(session) }
  }

  /// Creates the nghttp2 session and queues the client's SETTINGS (push off, a 1 MiB
  /// stream window so replies are not throttled by the 64 KiB default). Call once,
  /// right after init, on the loop; false when nghttp2 cannot allocate.
  func setUp() -> Bool {
    var callbacks: OpaquePointer?
    guard nghttp2_session_callbacks_new(&callbacks) == 0, let callbacks else { return false }
    defer { nghttp2_session_callbacks_del(callbacks) }
    Self.install(callbacks)
    var made: OpaquePointer?
    let me = Unmanaged.passUnretained(self).toOpaque()
    guard nghttp2_session_client_new(&made, callbacks, me) == 0, let made else { return false }
    session = made
    var settings = [
      nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_ENABLE_PUSH.rawValue), value: 0),
      nghttp2_settings_entry(
        settings_id: Int32(NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE.rawValue), value: 1 << 20),
    ]
    guard nghttp2_submit_settings(made, UInt8(NGHTTP2_FLAG_NONE.rawValue), &settings, settings.count) == 0
    else {
      return false
    }
    _ = nghttp2_session_set_local_window_size(made, UInt8(NGHTTP2_FLAG_NONE.rawValue), 0, 1 << 24)
    keepAlive = self
    return true
  }

  var usable: Bool { !goingAway && !closed }

  /// Starts a unary call; `completion` runs exactly once, on the loop.
  func start(
    path: String, message: [UInt8], metadata: [String: String], timeoutMs: UInt32,
    completion: @escaping Completion
  ) {
    let headers = GRPCRequestHeaders.make(
      path: path, authority: authority, timeoutMs: timeoutMs, metadata: metadata)
    begin(headers, body: GRPCMessageFrame.encode(message), plain: false, timeoutMs: timeoutMs, completion)
  }

  /// Starts a plain HTTP/2 POST of `body` to `path` (the JSON API on `h2`), with
  /// `headers` after the pseudo-headers; `completion` gets the response body when the
  /// status is 200, else an `RPCError` whose reason is `HTTP_<status>`.
  func startPost(
    path: String, headers: [(name: String, value: String)], body: [UInt8], timeoutMs: UInt32,
    completion: @escaping Completion
  ) {
    let pseudo: [(name: String, value: String)] = [
      (":method", "POST"), (":scheme", "https"), (":path", path), (":authority", authority),
    ]
    begin(pseudo + headers, body: body, plain: true, timeoutMs: timeoutMs, completion)
  }

  private func begin(
    _ headers: [(name: String, value: String)], body: [UInt8], plain: Bool, timeoutMs: UInt32,
    _ completion: @escaping Completion
  ) {
    guard usable, let session else {
      completion(.failure(.notProcessed("connection is going away")))
      return
    }
    let stream = Stream(completion: completion, request: body, plain: plain, maxMessageSize: maxMessageSize)
    let id = Self.submit(session, headers)
    guard id > 0 else {
      completion(.failure(.notProcessed("nghttp2 refused the request (\(id))")))
      return
    }
    streams[id] = stream
    // The server enforces grpc-timeout; this is the client's own bound, a little later.
    stream.timer = tls.loop.schedule(afterNanos: UInt64(timeoutMs) * 1_000_000 + 50_000_000) { [weak self] in
      guard let self, let session = self.session, self.streams[id] != nil else { return }
      _ = nghttp2_submit_rst_stream(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), id, NGHTTP2_CANCEL.rawValue)
      self.finish(id, .failure(.failed(RPCError(.deadlineExceeded, "no reply within \(timeoutMs) ms"))))
      self.flush()
    }
    flush()
  }

  func close() {
    if ready, let session, !closed {
      _ = nghttp2_session_terminate_session(session, NGHTTP2_NO_ERROR.rawValue)
      flush()
    }
    tls.closeGracefully()
  }

  /// Submits HEADERS (and the body through the data provider); the stream id or a
  /// negative nghttp2 error. nghttp2 copies the header block, so the buffers need only
  /// live through the call.
  private static func submit(_ session: OpaquePointer, _ headers: [(name: String, value: String)]) -> Int32 {
    var flat: [UInt8] = []
    var spans: [(name: Range<Int>, value: Range<Int>)] = []
    for header in headers {
      let nameStart = flat.count
      flat.append(contentsOf: header.name.utf8)
      let valueStart = flat.count
      flat.append(contentsOf: header.value.utf8)
      spans.append((nameStart..<valueStart, valueStart..<flat.count))
    }
    flat.append(0)  // never empty, so the base address exists
    return flat.withUnsafeMutableBufferPointer { buffer -> Int32 in
      guard let base = buffer.baseAddress else { return -1 }
      var nva = spans.map { span in
        nghttp2_nv(
          name: base + span.name.lowerBound, value: base + span.value.lowerBound,
          namelen: span.name.count, valuelen: span.value.count, flags: UInt8(NGHTTP2_NV_FLAG_NONE.rawValue))
      }
      var provider = nghttp2_data_provider(source: nghttp2_data_source(ptr: nil), read_callback: readBody)
      return nghttp2_submit_request(session, nil, &nva, nva.count, &provider, nil)
    }
  }

  /// Pulls what nghttp2 has to send and queues it on TLS (written at the end of the
  /// loop's iteration with everything else queued in it).
  private func flush() {
    guard ready, let session, tls.isOpen else { return }
    var out: [UInt8] = []
    while true {
      var data: UnsafePointer<UInt8>?
      let count = nghttp2_session_mem_send(session, &data)
      if count < 0 {
        fail("nghttp2 send: \(String(cString: nghttp2_strerror(Int32(count))))")
        return
      }
      guard count > 0, let data else { break }
      out.append(contentsOf: UnsafeBufferPointer(start: data, count: count))
    }
    if !out.isEmpty { tls.send(bytes: out) }
    if nghttp2_session_want_read(session) == 0 && nghttp2_session_want_write(session) == 0 {
      tls.closeGracefully()
    } else if goingAway && streams.isEmpty {
      tls.closeGracefully()
    }
  }

  private func finish(_ id: Int32, _ result: Result<[UInt8], ClientCallFailure>) {
    guard let stream = streams.removeValue(forKey: id) else { return }
    tls.loop.cancelTimer(stream.timer)
    stream.completion(result)
  }

  /// Ends the connection and fails every call on it.
  private func fail(_ why: String) {
    tls.close(error: GRPCConnectionError(why))
  }

  private func failAll(_ why: String) {
    closed = true
    flags.markUnusable()
    defer { keepAlive = nil }
    for id in streams.keys.sorted() {
      // Before the connection was ready no request left: another connection may take it.
      finish(
        id,
        .failure(
          ready
            ? .failed(RPCError(code: .unavailable, reason: "UNAVAILABLE", message: why)) : .notProcessed(why))
      )
    }
  }

  // MARK: TLSHandshakeDelegate

  func connectionDidHandshake(_ connection: TLSConnection) {
    guard connection.negotiatedProtocol == Self.applicationProtocol else {
      let chosen = connection.negotiatedProtocol ?? "none"
      failAll("the server did not choose h2 by ALPN (chose \(chosen))")
      connection.close(error: GRPCConnectionError("ALPN chose \(chosen), not h2"))
      return
    }
    ready = true
    flush()
  }

  // MARK: ByteStreamDelegate

  func stream(_ stream: any ByteStream, didReceive bytes: UnsafeRawBufferPointer) {
    guard let session, let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
    let used = nghttp2_session_mem_recv(session, base, bytes.count)
    if used < 0 {
      fail("nghttp2 receive: \(String(cString: nghttp2_strerror(Int32(used))))")
      return
    }
    flush()
  }

  func streamDidClose(_ stream: any ByteStream, error: (any Error)?) {
    failAll(error.map { "\($0)" } ?? "connection closed")
  }

  // MARK: nghttp2 callbacks (run inside mem_recv / mem_send, on the loop)

  fileprivate func header(stream id: Int32, name: String, value: String) {
    streams[id]?.fields[name] = value
  }

  fileprivate func data(stream id: Int32, _ bytes: UnsafeRawBufferPointer) {
    guard let stream = streams[id] else { return }
    if !stream.plain {
      stream.body.append(bytes)
    } else if stream.plainBody.count + bytes.count <= maxMessageSize {
      stream.plainBody.append(contentsOf: bytes)
    }
  }

  fileprivate func bodyChunk(stream id: Int32, into buffer: UnsafeMutablePointer<UInt8>, capacity: Int) -> (
    Int, Bool
  )? {
    guard let stream = streams[id] else { return nil }
    let count = min(capacity, stream.request.count - stream.sentBytes)
    stream.request.withUnsafeBufferPointer { source in
      guard let from = source.baseAddress else { return }
      buffer.update(from: from + stream.sentBytes, count: count)
    }
    stream.sentBytes += count
    return (count, stream.sentBytes == stream.request.count)
  }

  fileprivate func goAway() {
    goingAway = true
    flags.markUnusable()
  }

  fileprivate func streamClosed(_ id: Int32, errorCode: UInt32) {
    guard let stream = streams[id] else { return }
    if stream.plain, let status = stream.fields[":status"], errorCode == NGHTTP2_NO_ERROR.rawValue {
      let text = String(decoding: stream.plainBody.prefix(512), as: UTF8.self)
      finish(
        id,
        status == "200"
          ? .success(stream.plainBody)
          : .failure(.failed(RPCError(code: .unknown, reason: "HTTP_\(status)", message: text))))
      return
    }
    if stream.fields["grpc-status"] == nil && errorCode != NGHTTP2_NO_ERROR.rawValue {
      finish(id, .failure(Self.resetFailure(errorCode)))
      return
    }
    switch GRPCCallOutcome.result(fields: stream.fields, body: stream.body) {
    case .success(let message): finish(id, .success(message))
    case .failure(let error): finish(id, .failure(.failed(error)))
    }
  }

  /// gRPC's PROTOCOL-HTTP2 mapping of a RST_STREAM code to a status; REFUSED_STREAM means
  /// the server did not process the stream, so the call may go again.
  static func resetFailure(_ code: UInt32) -> ClientCallFailure {
    let name = String(cString: nghttp2_http2_strerror(code))
    switch code {
    case NGHTTP2_REFUSED_STREAM.rawValue: return .notProcessed("stream refused")
    case NGHTTP2_CANCEL.rawValue:
      return .failed(RPCError(code: .cancelled, reason: "CANCELLED", message: name))
    case NGHTTP2_ENHANCE_YOUR_CALM.rawValue:
      return .failed(RPCError(code: .resourceExhausted, reason: "RESOURCE_EXHAUSTED", message: name))
    case NGHTTP2_INADEQUATE_SECURITY.rawValue:
      return .failed(RPCError(code: .permissionDenied, reason: "PERMISSION_DENIED", message: name))
    default:
      return .failed(RPCError(code: .internalError, reason: "INTERNAL", message: "stream reset: \(name)"))
    }
  }

  private static func connection(_ user: UnsafeMutableRawPointer?) -> GRPCConnection? {
    user.map { Unmanaged<GRPCConnection>.fromOpaque($0).takeUnretainedValue() }
  }

  /// The request body, from the stream's buffer: nghttp2 asks as flow control allows.
  private static let readBody: nghttp2_data_source_read_callback = { _, id, buffer, length, flags, _, user in
    guard let buffer, let flags,
      let (count, done) = connection(user)?.bodyChunk(stream: id, into: buffer, capacity: length)
    else { return Int(NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE.rawValue) }
    if done { flags.pointee |= NGHTTP2_DATA_FLAG_EOF.rawValue }
    return count
  }

  private static func install(_ callbacks: OpaquePointer) {
    nghttp2_session_callbacks_set_on_header_callback(callbacks) {
      _, frame, name, nameLength, value, valueLength, _, user in
      guard let frame, let name, let value, frame.pointee.hd.type == UInt8(NGHTTP2_HEADERS.rawValue) else {
        return 0
      }
      GRPCConnection.connection(user)?.header(
        stream: frame.pointee.hd.stream_id,
        name: String(decoding: UnsafeBufferPointer(start: name, count: nameLength), as: UTF8.self),
        value: String(decoding: UnsafeBufferPointer(start: value, count: valueLength), as: UTF8.self))
      return 0
    }
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks) { _, _, id, data, length, user in
      guard let data else { return 0 }
      GRPCConnection.connection(user)?.data(stream: id, UnsafeRawBufferPointer(start: data, count: length))
      return 0
    }
    nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks) { _, frame, user in
      if let frame, frame.pointee.hd.type == UInt8(NGHTTP2_GOAWAY.rawValue) {
        GRPCConnection.connection(user)?.goAway()
      }
      return 0
    }
    nghttp2_session_callbacks_set_on_stream_close_callback(callbacks) { _, id, code, user in
      GRPCConnection.connection(user)?.streamClosed(id, errorCode: code)
      return 0
    }
  }
}

/// Why the client ended an HTTP/2 connection.
struct GRPCConnectionError: Error, CustomStringConvertible {
  let description: String
  init(_ description: String) { self.description = description }
}
