import CNghttp2

/// libnghttp2's callbacks for the server session. They are C function pointers, so they
/// capture nothing: each finds its `HTTP2ServerConnection` through `user_data`, an
/// unretained pointer to the connection that owns the session. That is safe because the
/// session is deleted before the connection is (and callbacks only run inside the
/// connection's own calls into the session, on its loop).
enum HTTP2Callbacks {
  static func connection(_ userData: UnsafeMutableRawPointer?) -> HTTP2ServerConnection? {
    guard let userData else { return nil }
    return Unmanaged<HTTP2ServerConnection>.fromOpaque(userData).takeUnretainedValue()
  }

  static let failure = Int32(NGHTTP2_ERR_CALLBACK_FAILURE.rawValue)

  /// One callbacks table for every session: nghttp2 copies it into each session.
  static func make() -> OpaquePointer? {
    var callbacks: OpaquePointer?
    guard nghttp2_session_callbacks_new(&callbacks) == 0, let callbacks else { return nil }
    nghttp2_session_callbacks_set_on_begin_headers_callback(callbacks) { _, frame, userData in
      guard let frame, let connection = HTTP2Callbacks.connection(userData) else {
        return HTTP2Callbacks.failure
      }
      return connection.beginHeaders(frame.pointee)
    }
    nghttp2_session_callbacks_set_on_header_callback(callbacks) {
      _, frame, name, nameLength, value, valueLength, _, userData in
      guard let frame, let name, let value, let connection = HTTP2Callbacks.connection(userData) else {
        return HTTP2Callbacks.failure
      }
      return connection.header(
        frame.pointee, name: UnsafeBufferPointer(start: name, count: nameLength),
        value: UnsafeBufferPointer(start: value, count: valueLength))
    }
    nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks) { _, frame, userData in
      guard let frame, let connection = HTTP2Callbacks.connection(userData) else {
        return HTTP2Callbacks.failure
      }
      return connection.frameReceived(frame.pointee)
    }
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks) {
      _, _, streamID, data, length, userData in
      guard let connection = HTTP2Callbacks.connection(userData) else { return HTTP2Callbacks.failure }
      return connection.dataReceived(
        streamID, UnsafeRawBufferPointer(start: data, count: data == nil ? 0 : length))
    }
    nghttp2_session_callbacks_set_on_stream_close_callback(callbacks) { _, streamID, errorCode, userData in
      guard let connection = HTTP2Callbacks.connection(userData) else { return HTTP2Callbacks.failure }
      return connection.streamClosed(streamID, errorCode: errorCode)
    }
    return callbacks
  }

  /// The response body's source: the stream's queued bytes, then its end or trailers.
  static let readBody: nghttp2_data_source_read_callback = {
    _, streamID, buffer, length, flags, _, userData in
    guard let buffer, let flags, let connection = HTTP2Callbacks.connection(userData) else {
      return Int(HTTP2Callbacks.failure)
    }
    return connection.readBody(
      streamID, into: UnsafeMutableRawBufferPointer(start: buffer, count: length), flags: flags)
  }
}
