/// What the HTTP/2 session keeps for one open request stream: its header block while it
/// arrives, its handler once chosen, and the response body queued for the peer's
/// flow-control window. Loop thread only.
final class HTTP2StreamState {
  let id: Int32
  /// The request's header block (pseudo-headers included), until the handler takes it.
  var headers: [HTTP2Header] = []
  /// Bytes of the header list as RFC 9113 counts them (name + value + 32 a field).
  var headerListBytes = 0
  /// Chosen when the header block is complete.
  var handler: (any HTTP2StreamHandler)?
  /// The request's body is still to come: since when (the partial timeout's clock).
  var bodySince: UInt64?
  /// Body bytes received and not yet complete, charged to the connection's receive
  /// account (the handler may be holding them until END_STREAM).
  var bodyHeld = 0
  /// A chunk of the body was refused by the receive budget (the stream is being reset):
  /// every later chunk is dropped too, so none reaches the handler out of place.
  var bodyRefused = false

  /// The request was refused before its header block ended (431 submitted): nothing of
  /// it is decoded into fields, kept or handed to a handler.
  var refused = false
  /// Body bytes received while the connection was over its output budget: their window
  /// is given back once the output has drained (no window given back meanwhile).
  var unconsumed = 0
  /// The handler waits for the queued body to drain (`HTTP2StreamSink.notifyWhenDrained`).
  var drainWaited = false
  /// When the session last took queued body bytes of this stream (or the queue was
  /// empty): a waiting stream whose queue has not moved for the idle timeout is reset.
  var outputProgressAt: UInt64 = 0

  /// The response: submitted (HEADERS sent or queued); its body bytes not yet taken by
  /// the session; whether the body is complete; and the trailers to end it with.
  var responseStarted = false
  var output: [UInt8] = []
  var outputOffset = 0
  var outputEnded = false
  var trailers: [HTTP2Header]?
  /// The data provider returned "deferred": the session must be told when more comes.
  var deferred = false

  init(id: Int32) { self.id = id }

  var pendingOutput: Int { output.count - outputOffset }
}
