import AnonAuthNet

/// One server connection as its loop's registry sees it, whatever it speaks (native
/// frames or HTTP/1.1): swept for timeouts, drained on shutdown, closed at the end.
/// Confined to its loop's thread.
protocol ServedConnection: AnyObject {
  /// The peer's IP address, whose place in the connection limits the registry frees.
  var peerHost: String? { get }
  /// Handshake, partial-request and idle timeouts; ages saturate at zero.
  func checkTimeouts(now: UInt64)
  /// Graceful shutdown: no new requests; close once those in flight are answered.
  func drain()
  /// The grace period is over: close now.
  func closeNow()
}
