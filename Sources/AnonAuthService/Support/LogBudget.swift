import Dispatch
import Synchronization

/// How many lines an event that outsiders can cause may write to the log: a burst, then
/// one a second. What it refuses is counted and reported with the next line it allows,
/// so a flood (of refused cluster handshakes, say) costs a line a second, not one per
/// attempt, and is still visible in the log.
public final class LogBudget: Sendable {
  private struct State {
    var tokens: Double
    var refilledAtNs: UInt64
    var suppressed = 0
  }

  private let burst: Double
  private let intervalNs: UInt64
  private let state: Mutex<State>

  /// - Parameters:
  ///   - burst: lines allowed at once after a quiet spell.
  ///   - intervalNs: the time that earns one more line.
  public init(burst: Int = 10, intervalNs: UInt64 = 1_000_000_000, nowNs: UInt64 = LogBudget.now()) {
    self.burst = Double(max(1, burst))
    self.intervalNs = max(1, intervalNs)
    state = Mutex(State(tokens: Double(max(1, burst)), refilledAtNs: nowNs))
  }

  /// Whether a line may be written now; if so, how many were refused since the last one
  /// allowed (0 after a quiet spell). nil: count it, write nothing.
  public func take(nowNs: UInt64 = LogBudget.now()) -> Int? {
    state.withLock { state in
      if nowNs > state.refilledAtNs {
        let earned = Double(nowNs - state.refilledAtNs) / Double(intervalNs)
        state.tokens = min(burst, state.tokens + earned)
        state.refilledAtNs = nowNs
      }
      guard state.tokens >= 1 else {
        state.suppressed += 1
        return nil
      }
      state.tokens -= 1
      defer { state.suppressed = 0 }
      return state.suppressed
    }
  }

  public static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }
}
