/// A connection seen as a stream of bytes, for the protocols that frame them (native
/// `anonauth/1` frames, HTTP/1.1, HTTP/2): a TLS connection, or a plain TCP connection. Everything here
/// runs on the connection's loop thread.
public protocol ByteStream: AnyObject {
  var loop: EventLoop { get }
  var peer: SocketAddress? { get }
  /// Whether bytes can still be sent (not closing or closed).
  var isOpen: Bool { get }
  /// Monotonic time of the last bytes in or out.
  var lastActivity: UInt64 { get }
  /// The common name of a verified client certificate (mutual TLS); nil on plain TCP.
  var verifiedPeerName: String? { get }
  /// Whether queued output has not all reached the socket yet.
  var hasPendingOutput: Bool { get }
  /// Set by the owner to stop reading (the peer's further bytes wait in the kernel);
  /// cleared, reading resumes on the loop's next iteration. Reading also stops on its
  /// own while queued output is over the stream's high watermark.
  var readingHeld: Bool { get set }
  /// Whether reading stopped on its own because queued output is over the high watermark
  /// (the peer does not read): the peer's unfinished request is then not the peer's delay.
  var readPaused: Bool { get }
  /// Bytes the stream reads in one turn of its loop before it yields to the loop's other
  /// connections. Set by the owner once it knows what the bytes cost to decode.
  var readBudgetBytes: Int { get set }
  /// Served after the loop's other connections (an abusive peer's): see
  /// `SocketStream.deprioritized`.
  var deprioritized: Bool { get set }
  /// Queues bytes; they are written at the end of the loop's iteration.
  func send(bytes: [UInt8])
  /// Writes what is queued, ends the write side, and closes once the peer has closed
  /// too (or after a linger), so the peer reads the last reply instead of a reset.
  func closeGracefully()
  /// Closes at once; queued output is dropped.
  func close(error: (any Error)?)
}

/// What a `ByteStream` reports to its owner, on the stream's loop thread.
public protocol ByteStreamDelegate: AnyObject {
  /// Bytes as they came; valid only during the call.
  func stream(_ stream: any ByteStream, didReceive bytes: UnsafeRawBufferPointer)
  func streamDidClose(_ stream: any ByteStream, error: (any Error)?)
  /// Called before each read of a turn of the loop: an owner that decodes units (frames)
  /// from the bytes and delivers them with a per-turn budget delivers what it holds,
  /// counting in `delivered` (0 at the start of each turn). Returns false when it stopped
  /// with units left (budget spent, or `readPaused`): the stream then reads nothing more
  /// this turn and calls again on the next one. The default delivers nothing.
  func streamDeliverBuffered(_ stream: any ByteStream, delivered: inout Int) -> Bool
  /// Queued output fell back under the low watermark after `readPaused` was set: an
  /// owner that stopped moving its own queued output into the stream (HTTP/2's session)
  /// moves more now. The event replaces polling: a stream whose peer does not read costs
  /// nothing until the peer reads. The default does nothing.
  func streamOutputDrained(_ stream: any ByteStream)
}

extension ByteStreamDelegate {
  public func streamDeliverBuffered(_ stream: any ByteStream, delivered: inout Int) -> Bool { true }
  public func streamOutputDrained(_ stream: any ByteStream) {}
}
