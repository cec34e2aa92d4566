/// What every server connection keeps besides its framing: the clocks of its three
/// timeouts (handshake, partial request, idle) and its drain state, in one place, so each
/// transport only says how it answers them (the native `GoAway`, HTTP/1.1's 408 or
/// `Connection: close`, HTTP/2's GOAWAY). Loop thread only, like its connection.
///
/// Ages saturate at zero: an instant stamped after `now` was read is no age at all.
struct ConnectionLifecycle {
  /// serving → draining (no new calls; those in flight finish) → closing (the stream is
  /// closing; nothing more is sent). A phase never goes back.
  enum Phase: Comparable {
    case serving, draining, closing
  }

  /// Which clock ran out.
  enum Expiry: Equatable {
    /// The handshake (TLS, or HTTP/2's preface) did not finish in time.
    case handshake
    /// A request (frame, head, body, header block) was begun and not finished.
    case partialRequest
    /// Nothing was in flight and nothing moved.
    case idle
  }

  private(set) var phase = Phase.serving
  private let handshakeNanos: UInt64
  private let partialNanos: UInt64
  private let idleNanos: UInt64

  init(config: RPCServerConfig) {
    handshakeNanos = config.handshakeTimeoutMs * 1_000_000
    partialNanos = config.partialFrameTimeoutMs * 1_000_000
    idleNanos = config.idleTimeoutMs * 1_000_000
  }

  var isServing: Bool { phase == .serving }
  var isDraining: Bool { phase >= .draining }
  var isClosing: Bool { phase == .closing }

  /// Moves to draining; false if it was already draining or closing.
  mutating func beginDraining() -> Bool {
    guard phase == .serving else { return false }
    phase = .draining
    return true
  }

  /// Moves to closing; false if it already was.
  mutating func beginClosing() -> Bool {
    guard phase != .closing else { return false }
    phase = .closing
    return true
  }

  /// The clock that ran out at `now`, checked in order: the handshake (while
  /// `handshakeSince` is set), a partial request begun at `partialSince`, then idleness
  /// (only when `idle`: nothing in flight) since `lastActivity`.
  func expiry(
    now: UInt64, handshakeSince: UInt64? = nil, partialSince: UInt64?, lastActivity: UInt64, idle: Bool
  ) -> Expiry? {
    if let handshakeSince {
      return Self.age(handshakeSince, now) > handshakeNanos ? .handshake : nil
    }
    if let partialSince, Self.age(partialSince, now) > partialNanos { return .partialRequest }
    if idle, Self.age(lastActivity, now) > idleNanos { return .idle }
    return nil
  }

  /// Whether `nanos` have passed since `since` (for a transport's own clocks, such as an
  /// HTTP/2 stream's body, which run on the same partial-request limit).
  func partialExpired(since: UInt64, now: UInt64) -> Bool { Self.age(since, now) > partialNanos }
  func idleExpired(since: UInt64, now: UInt64) -> Bool { Self.age(since, now) > idleNanos }

  static func age(_ since: UInt64, _ now: UInt64) -> UInt64 { now > since ? now - since : 0 }
}
