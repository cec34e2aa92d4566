import AnonAuthWire

/// What the gRPC handler keeps for one open stream. Loop thread only.
final class GRPCStreamCall {
  enum Phase {
    /// Reading the request; a unary call starts when it ends.
    case receiving
    /// A call runs for the stream (router or local); its answer is still to come.
    case running
    /// Answered: the rest of the request body, if any, is dropped.
    case done
  }

  let id: Int32
  let head: GRPCRequestHead
  let requestID: String
  /// When the header block arrived: the deadline counts from here.
  let openedAt: UInt64
  var deframer: GRPCMessageDeframer
  var phase: Phase = .receiving
  /// The client ended its side (END_STREAM).
  var requestEnded = false
  /// Response HEADERS went out (a local method sent a message): the status goes in
  /// trailers, not trailers-only.
  var responseStarted = false
  /// A unary call's request message, once read.
  var request: [UInt8]?
  /// A local method's incoming messages; finished when the client half-closes.
  var incoming: AsyncStream<[UInt8]>.Continuation?
  /// A local method's `send` waiting for its answer to leave the stream's queue (the
  /// peer's window): resumed by the drain event, or with false when the stream ends.
  var drainWaiter: CheckedContinuation<Bool, Never>?
  /// Request messages that arrived while an answer waited: kept (and still charged to
  /// the receive budget) until it drained, so a stream has one answer outstanding.
  var heldMessages: [[UInt8]] = []

  init(id: Int32, head: GRPCRequestHead, requestID: String, openedAt: UInt64, messageLimit: Int) {
    self.id = id
    self.head = head
    self.requestID = requestID
    self.openedAt = openedAt
    deframer = GRPCMessageDeframer(limit: messageLimit)
  }
}
