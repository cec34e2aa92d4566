import Foundation
import Synchronization

/// Wall-clock time as the services read it. Injected, so that tests can move time
/// (token expiry, quota windows, clean-up schedules) without sleeping.
public protocol ServiceClock: Sendable {
  /// Milliseconds since the Unix epoch.
  func nowMs() -> Int64
}

extension ServiceClock {
  /// Whole seconds since the Unix epoch, as JWT claims carry them.
  public func nowSeconds() -> Int64 { nowMs() / 1000 }
}

/// The real clock (which `faketime` moves for black-box tests).
public struct SystemClock: ServiceClock {
  public init() {}
  public func nowMs() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) }
}

/// A clock that moves only when told to.
public final class ManualClock: ServiceClock {
  private let now: Atomic<Int64>

  public init(nowMs: Int64 = 1_800_000_000_000) {
    now = Atomic(nowMs)
  }

  public func nowMs() -> Int64 { now.load(ordering: .relaxed) }

  public func advance(ms: Int64) { now.add(ms, ordering: .relaxed) }

  public func advance(seconds: Int64) { advance(ms: seconds * 1000) }
}
