/// What a `SocketStream` reads and writes through: the bytes of the connection as the
/// owner sees them, over the descriptor the stream owns. Plaintext (`PlainRecords`) or
/// OpenSSL's TLS records (`TLSRecords`), both on the same descriptor with no copy of
/// their own: the stream owns the buffers, the interest, the budgets and the close.
/// Loop thread only.
public protocol RecordLayer: AnyObject {
  /// Whether `handshake` must complete before bytes flow.
  var needsHandshake: Bool { get }
  /// One step of the handshake: `.transferred(0)` once it is complete.
  func handshake() -> RecordIO
  /// Reads into `buffer`: `.transferred(n)` with n > 0, or why nothing was read.
  func read(into buffer: UnsafeMutableRawBufferPointer) -> RecordIO
  /// Writes from `bytes`: `.transferred(n)` with n > 0, or why nothing was written.
  func write(_ bytes: UnsafeRawBufferPointer) -> RecordIO
  /// Whether the layer holds input read from the descriptor and not yet returned by
  /// `read` (which no readable event will announce).
  var hasBufferedInput: Bool { get }
  /// Ends the write side once everything queued is out (TLS close_notify, then the TCP
  /// write side).
  func shutdownWrite()
  /// The protocol the handshake chose (ALPN), and a verified client certificate's
  /// common name; nil on plaintext.
  var negotiatedProtocol: String? { get }
  var verifiedPeerName: String? { get }
  /// Gives up what the layer holds (the SSL object); the stream closes the descriptor.
  func release()
}

/// The outcome of one read, write or handshake step.
public enum RecordIO {
  case transferred(Int)
  /// Nothing until the descriptor is readable (or, for `wantWrite`, writable).
  case wantRead
  case wantWrite
  /// The peer ended its side in order.
  case closed
  case failed(any Error)
}
