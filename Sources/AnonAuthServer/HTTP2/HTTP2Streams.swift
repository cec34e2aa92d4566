/// One HTTP/2 header field as HPACK carries it: the name is lowercase (HTTP/2 forbids
/// uppercase names; the session refuses a request that has one), pseudo-headers start
/// with ":".
struct HTTP2Header: Sendable, Equatable {
  var name: String
  var value: String

  init(_ name: String, _ value: String) {
    self.name = name
    self.value = value
  }
}

/// What an HTTP/2 server session reports about one request stream to whoever serves it
/// (the gRPC transport, or the JSON API for any other content type). Everything runs on
/// the connection's loop thread.
///
/// The session chooses the handler when a stream's header block arrives and keeps it for
/// the stream's life; after `streamClosed` it never calls the handler about that stream
/// again.
protocol HTTP2StreamHandler: AnyObject {
  /// A request's header block arrived, its pseudo-headers checked by the session
  /// (`:method`, `:path`, `:scheme`, `:authority` in `headers`). `endStream`: no body
  /// follows.
  func streamOpened(_ stream: Int32, headers: [HTTP2Header], endStream: Bool, session: any HTTP2StreamSink)

  /// Part of the request body, in order; valid only during the call. The session gives
  /// the bytes back to the peer's flow-control window when this returns, so a handler
  /// that keeps them (up to its own limit) holds them in its own buffer. `endStream`:
  /// the body is complete (may come with no bytes; request trailers are dropped).
  func stream(
    _ stream: Int32, received bytes: UnsafeRawBufferPointer, endStream: Bool, session: any HTTP2StreamSink)

  /// The stream is over: answered and flushed (`errorCode` 0), reset by the peer, refused
  /// by the session, or cut by the connection's end. A call still running for it is
  /// cancelled by the handler; nothing more may be sent on it.
  func streamClosed(_ stream: Int32, errorCode: UInt32, session: any HTTP2StreamSink)

  /// Everything queued on the stream was taken by the session (the peer's window let it
  /// go), after the handler asked with `notifyWhenDrained`. The default does nothing.
  func streamDrained(_ stream: Int32, session: any HTTP2StreamSink)
}

extension HTTP2StreamHandler {
  func streamDrained(_ stream: Int32, session: any HTTP2StreamSink) {}
}

/// What a stream's handler can do to its stream; the HTTP/2 connection implements it
/// (and tests and the fuzz target fake it). Calls about a stream that is already closed
/// are ignored. Loop thread only.
protocol HTTP2StreamSink: AnyObject {
  /// Sends the response's header block; `endStream` ends the stream with it (a gRPC
  /// trailers-only answer, or an HTTP reply with no body).
  func sendHeaders(_ stream: Int32, _ headers: [HTTP2Header], endStream: Bool)
  /// Queues body bytes; they go out as the peer's flow-control windows allow.
  func sendData(_ stream: Int32, _ bytes: [UInt8], endStream: Bool)
  /// Ends the stream with a trailer block, after every byte queued before it.
  func sendTrailers(_ stream: Int32, _ trailers: [HTTP2Header])
  /// Resets the stream (RST_STREAM with an HTTP/2 error code).
  func resetStream(_ stream: Int32, errorCode: UInt32)
  /// The handler handed `bytes` of the body on as whole messages (a streaming method's
  /// requests, prefix included): the connection stops charging them to the receive
  /// budget, and the stream's partial-body clock restarts, since a client sending whole
  /// messages is not trickling one. Unary bodies never call it (their bytes stay held
  /// until the body ends).
  func messagesTaken(_ stream: Int32, bytes: Int)
  /// Body bytes queued on the stream and not yet sent (the peer's window is closed):
  /// a streaming handler stops producing while this is high.
  func pendingBytes(_ stream: Int32) -> Int
  /// Asks for `HTTP2StreamHandler.streamDrained` once the stream's queued body has all
  /// been taken: a streaming handler waits for that event instead of polling. False when
  /// nothing is queued (no event will come) or the stream is gone. A stream whose queue
  /// does not move for the idle timeout while waited on is reset (CANCEL).
  func notifyWhenDrained(_ stream: Int32) -> Bool
  /// The per-connection state every call of this connection shares: slots, budgets,
  /// deadlines (see `ConnectionCalls`), and the peer.
  var calls: ConnectionCalls { get }
  /// The socket peer's IP address, and a verified client certificate's name.
  var peerHost: String? { get }
  var clientCertificateName: String? { get }
  /// Whether the connection is draining (GOAWAY sent): new streams are refused.
  var goingAway: Bool { get }
}

extension HTTP2StreamSink {
  /// Fakes of the sink (tests) hold no body: nothing to give back.
  func messagesTaken(_ stream: Int32, bytes: Int) {}
}
