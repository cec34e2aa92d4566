import AnonAuthNet
import CNghttp2

@testable import AnonAuthServer

/// A `ByteStream` with no socket: what the server sends is kept in `sent`, and a close
/// reaches the delegate on the loop's next iteration, as a real connection's would.
/// Loop thread only.
final class FakeByteStream: ByteStream {
  let loop: EventLoop
  var peer: SocketAddress? { nil }
  private(set) var isOpen = true
  var lastActivity = MonotonicClock.now()
  var verifiedPeerName: String? { nil }
  var hasPendingOutput: Bool { false }
  var readingHeld = false
  var readBudgetBytes = 0
  var deprioritized = false
  var readPaused = false
  var sent: [UInt8] = []
  /// How many times `send` was called (each is one queued array on a real connection).
  private(set) var sends = 0
  private(set) var closed = false
  weak var delegate: (any ByteStreamDelegate)?

  init(loop: EventLoop) { self.loop = loop }

  /// When set, sending makes `readPaused` true once this many bytes wait in `sent` (a
  /// socket's high watermark).
  var highWater: Int?

  func send(bytes: [UInt8]) {
    guard isOpen else { return }
    sends += 1
    sent.append(contentsOf: bytes)
    if let highWater, sent.count >= highWater { readPaused = true }
  }

  func closeGracefully() { close(error: nil) }

  func close(error: (any Error)?) {
    guard isOpen else { return }
    isOpen = false
    loop.runOnNextIteration { [self] in
      closed = true
      delegate?.streamDidClose(self, error: error)
    }
  }

  func takeSent() -> [UInt8] {
    defer { sent = [] }
    return sent
  }
}

/// libnghttp2's client session, producing the frames a real HTTP/2 client sends and
/// reading the server's answers; what it saw is kept per stream.
final class HTTP2TestClient {
  struct Response {
    var headers: [String: String] = [:]
    var body: [UInt8] = []
    /// The stream's RST_STREAM / close error code, once closed.
    var closedWith: UInt32?
  }

  private(set) var session: OpaquePointer?
  var responses: [Int32: Response] = [:]
  var bodies: [Int32: [UInt8]] = [:]
  /// GOAWAY frames received: (last stream id, error code).
  var goAways: [(lastStream: Int32, errorCode: UInt32)] = []
  var settingsReceived = false

  /// `initialWindow`: the SETTINGS_INITIAL_WINDOW_SIZE the client announces (0: a peer
  /// that never lets the server send a body byte).
  init(initialWindow: UInt32? = nil) {
    var callbacks: OpaquePointer?
    nghttp2_session_callbacks_new(&callbacks)
    nghttp2_session_callbacks_set_send_callback(callbacks) { _, _, _, _, _ in
      Int(NGHTTP2_ERR_WOULDBLOCK.rawValue)
    }
    nghttp2_session_callbacks_set_on_header_callback(callbacks) {
      _, frame, name, nameLength, value, valueLength, _, userData in
      guard let client = HTTP2TestClient.from(userData), let frame, let name, let value else { return 0 }
      let id = frame.pointee.hd.stream_id
      let key = String(decoding: UnsafeBufferPointer(start: name, count: nameLength), as: UTF8.self)
      client.responses[id, default: Response()].headers[key] = String(
        decoding: UnsafeBufferPointer(start: value, count: valueLength), as: UTF8.self)
      return 0
    }
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks) { _, _, id, data, length, userData in
      guard let client = HTTP2TestClient.from(userData), let data else { return 0 }
      client.responses[id, default: Response()].body.append(
        contentsOf: UnsafeBufferPointer(start: data, count: length))
      return 0
    }
    nghttp2_session_callbacks_set_on_stream_close_callback(callbacks) { _, id, errorCode, userData in
      guard let client = HTTP2TestClient.from(userData) else { return 0 }
      client.responses[id, default: Response()].closedWith = errorCode
      return 0
    }
    nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks) { _, frame, userData in
      guard let client = HTTP2TestClient.from(userData), let frame else { return 0 }
      switch UInt32(frame.pointee.hd.type) {
      case NGHTTP2_GOAWAY.rawValue:
        client.goAways.append((frame.pointee.goaway.last_stream_id, frame.pointee.goaway.error_code))
      case NGHTTP2_SETTINGS.rawValue:
        client.settingsReceived = true
      default: break
      }
      return 0
    }
    var made: OpaquePointer?
    nghttp2_session_client_new(&made, callbacks, Unmanaged.passUnretained(self).toOpaque())
    nghttp2_session_callbacks_del(callbacks)
    session = made
    var settings =
      initialWindow.map {
        [nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE.rawValue), value: $0)]
      } ?? []
    _ = nghttp2_submit_settings(made, UInt8(NGHTTP2_FLAG_NONE.rawValue), &settings, settings.count)
  }

  deinit { nghttp2_session_del(session) }

  static func from(_ userData: UnsafeMutableRawPointer?) -> HTTP2TestClient? {
    userData.map { Unmanaged<HTTP2TestClient>.fromOpaque($0).takeUnretainedValue() }
  }

  /// What the server set in its SETTINGS frame.
  func remoteSetting(_ id: nghttp2_settings_id) -> UInt32 {
    nghttp2_session_get_remote_settings(session, id)
  }

  /// Opens a request stream; `body` nil: the HEADERS frame ends the stream. `endBody`
  /// false: the body's bytes are sent and the stream stays open.
  @discardableResult
  func request(
    method: String = "POST", path: String, headers: [(String, String)] = [], body: [UInt8]? = nil,
    endBody: Bool = true
  ) -> Int32 {
    let list =
      [
        HTTP2Header(":method", method), HTTP2Header(":scheme", "https"),
        HTTP2Header(":authority", "localhost"),
        HTTP2Header(":path", path),
      ] + headers.map { HTTP2Header($0.0, $0.1) }
    guard let body else {
      return withHeaderList(list) { nghttp2_submit_request(session, nil, $0, $1, nil, nil) }
    }
    var provider = nghttp2_data_provider(
      source: nghttp2_data_source(ptr: nil),
      read_callback: { _, id, buffer, length, flags, _, userData in
        guard let client = HTTP2TestClient.from(userData), let buffer, let flags else { return 0 }
        let pending = client.bodies[id] ?? []
        let count = min(length, pending.count)
        pending.withUnsafeBytes { source in
          if count > 0, let base = source.baseAddress {
            UnsafeMutableRawPointer(buffer).copyMemory(from: base, byteCount: count)
          }
        }
        client.bodies[id] = Array(pending.dropFirst(count))
        if client.bodies[id]?.isEmpty == true {
          if client.openBodies.contains(id) {
            return count == 0 ? Int(NGHTTP2_ERR_DEFERRED.rawValue) : count
          }
          flags.pointee |= NGHTTP2_DATA_FLAG_EOF.rawValue
        }
        return count
      })
    let id = withHeaderList(list) { nghttp2_submit_request(session, nil, $0, $1, &provider, nil) }
    bodies[id] = body
    if !endBody { openBodies.insert(id) }
    return id
  }

  /// Streams whose body stays open after the bytes given.
  var openBodies: Set<Int32> = []

  /// More bytes of a body left open (`endBody: false`).
  func sendMore(_ id: Int32, _ bytes: [UInt8]) {
    bodies[id, default: []] += bytes
    _ = nghttp2_session_resume_data(session, id)
  }

  /// Opens the client's receive window by `increment` bytes: for the stream, and for
  /// the connection as well (stream 0).
  func openWindow(_ id: Int32, by increment: Int32) {
    _ = nghttp2_submit_window_update(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), id, increment)
    _ = nghttp2_submit_window_update(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), 0, increment)
  }

  func reset(_ id: Int32, errorCode: UInt32 = NGHTTP2_CANCEL.rawValue) {
    _ = nghttp2_submit_rst_stream(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), id, errorCode)
  }

  /// Everything the client has to send now.
  func output() -> [UInt8] {
    var bytes: [UInt8] = []
    while true {
      var data: UnsafePointer<UInt8>?
      let count = nghttp2_session_mem_send(session, &data)
      guard count > 0, let data else { break }
      bytes.append(contentsOf: UnsafeBufferPointer(start: data, count: count))
    }
    return bytes
  }

  func input(_ bytes: [UInt8]) {
    guard !bytes.isEmpty else { return }
    _ = bytes.withUnsafeBufferPointer { nghttp2_session_mem_recv(session, $0.baseAddress, $0.count) }
  }
}
