/// Streams an HTTP/2 connection may have refused at once (a header list over the limit,
/// a stream opened while the output is over budget, a body over the receive budget)
/// before the connection is ended with `GOAWAY ENHANCE_YOUR_CALM`: a token bucket of
/// `HTTP2SessionLimits.refusedStreamBurst`, refilled one a second. Each refusal costs the
/// daemon its decoding however cheap that is made; a client that keeps earning them is
/// an attacker, and ending its connection puts it behind the address's connection rate
/// limit. Loop thread only.
struct HTTP2RefusalBucket {
  private let burst: Double
  private let refillNanos: UInt64
  private var tokens: Double
  private var refilledAt: UInt64?

  init(burst: Int = HTTP2SessionLimits.refusedStreamBurst, refillNanos: UInt64 = 1_000_000_000) {
    self.burst = Double(max(1, burst))
    self.refillNanos = max(1, refillNanos)
    tokens = Double(max(1, burst))
  }

  /// Counts one refusal; false when the bucket was empty (end the connection).
  mutating func take(now: UInt64) -> Bool {
    if let refilledAt, now > refilledAt {
      tokens = min(burst, tokens + Double(now - refilledAt) / Double(refillNanos))
    }
    refilledAt = now
    guard tokens >= 1 else { return false }
    tokens -= 1
    return true
  }
}
