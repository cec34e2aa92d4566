import AnonAuthNet

/// What one HTTP/2 connection holds for its peer: response bodies queued on its streams
/// and not yet taken by the session, because the peer's flow-control window is closed.
/// They are charged to the same process and per-address budgets as received bytes
/// (`ReceiveBudget`, `--max-buffered-bytes(-per-ip)`), and a connection holds at most
/// `HTTP2SessionLimits.maxQueuedOutputBytes` before it counts as over.
///
/// An answer already computed cannot be refused, so the charge is forced; what a
/// connection over its budget loses is new work: its new streams are refused
/// (`REFUSED_STREAM`) and no window is given back for what it sends, until the output
/// falls to half the per-connection bound within the budgets (or to nothing). A
/// connection over it whose output has not moved for the frame timeout is ended.
/// Loop thread only, like its connection.
struct HTTP2OutputBudget {
  enum Change: Equatable {
    /// The connection went over: stop taking work from it.
    case wentOver
    /// The output drained enough: take work again.
    case cameBack
  }

  private let account: ReceiveBudget.Account
  private let limit: Int
  /// Bytes queued on the connection's streams.
  private(set) var bytes = 0
  /// The most queued at once (for the memory trimmer, when the connection closes).
  private(set) var peak = 0
  private(set) var over = false
  /// When queued bytes last went down (or the connection went over): the stall clock.
  private(set) var progressAt: UInt64 = 0

  init(account: ReceiveBudget.Account, limit: Int = HTTP2SessionLimits.maxQueuedOutputBytes) {
    self.account = account
    self.limit = limit
  }

  /// `delta` bytes were queued (positive) or taken by the session or dropped (negative).
  mutating func add(_ delta: Int, now: UInt64) -> Change? {
    guard delta != 0 else { return nil }
    bytes = max(0, bytes + delta)
    peak = max(peak, bytes)
    let within = account.force(to: bytes) && bytes <= limit
    if delta < 0 { progressAt = now }
    if !over {
      guard !within else { return nil }
      over = true
      progressAt = now
      return .wentOver
    }
    return comeBackIfDrained(within: within)
  }

  /// Looks at the budgets again (other connections of the address may have drained).
  mutating func recheck() -> Change? {
    guard over else { return nil }
    return comeBackIfDrained(within: account.force(to: bytes))
  }

  mutating func release() {
    bytes = 0
    over = false
    account.release()
  }

  private mutating func comeBackIfDrained(within: Bool) -> Change? {
    guard bytes == 0 || (within && bytes <= limit / 2) else { return nil }
    over = false
    return .cameBack
  }
}
