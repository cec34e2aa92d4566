import AnonAuthNet
import CShims
import Dispatch
import Synchronization

/// Gives freed heap back to the system after a burst of connections is gone. glibc keeps
/// freed memory in its arenas: a flood of 1,600 abandoned TLS handshakes left the daemon
/// at 150 MiB resident long after every connection had closed (40 MiB after
/// `malloc_trim`).
///
/// `malloc_trim` walks every arena under that arena's lock, and an event loop that
/// allocates meanwhile waits for it: trimming every 2 s through a sustained flood made
/// loop turns of 10 to 25 ms. So the trim waits for the burst to end: after
/// `closesPerTrim` closed connections it is due `quiet` after the last close, and put
/// off while closes keep coming, for at most `longestWait` (memory still comes back
/// during an attack that never pauses). It runs on a utility queue, never on a loop.
final class MemoryTrimmer: Sendable {
  static let closesPerTrim = 256
  /// Bytes a closed connection had held at its peak that count as one more close: the
  /// HTTP/2 connections of a zero-window attack each held a megabyte of queued answers,
  /// and 16 of them left 200 MiB resident that 16 closes never trimmed.
  static let bytesPerClose = 16 * 1024
  static let quietNanos: UInt64 = 2_000_000_000
  static let longestWaitNanos: UInt64 = 30_000_000_000

  private struct State {
    var closedSinceTrim = 0
    var lastCloseNanos: UInt64 = 0
    /// When the pending trim was first due; nil while none is pending.
    var pendingSince: UInt64?
  }

  private let state = Mutex(State())
  private let trim: @Sendable () -> Void
  private let schedule: @Sendable (_ afterNanos: UInt64, _ body: @escaping @Sendable () -> Void) -> Void
  private let now: @Sendable () -> UInt64

  /// The defaults trim with `malloc_trim(0)` on a utility queue; tests pass their own.
  init(
    trim: @escaping @Sendable () -> Void = { _ = anonauth_malloc_trim() },
    schedule: @escaping @Sendable (UInt64, @escaping @Sendable () -> Void) -> Void = { nanos, body in
      DispatchQueue.global(qos: .utility).asyncAfter(
        deadline: .now() + .nanoseconds(Int(min(nanos, UInt64(Int.max)))), execute: body)
    },
    now: @escaping @Sendable () -> UInt64 = { MonotonicClock.now() }
  ) {
    self.trim = trim
    self.schedule = schedule
    self.now = now
  }

  func connectionClosed(heldPeakBytes: Int = 0) {
    let time = now()
    let start = state.withLock { state -> Bool in
      state.closedSinceTrim += 1 + max(0, heldPeakBytes) / Self.bytesPerClose
      state.lastCloseNanos = time
      guard state.closedSinceTrim >= Self.closesPerTrim, state.pendingSince == nil else { return false }
      state.pendingSince = time
      return true
    }
    if start { schedule(Self.quietNanos) { [self] in check() } }
  }

  /// Trims when closes have stopped for `quiet`, or the trim has waited `longestWait`;
  /// otherwise looks again when the quiet period since the last close would end.
  private func check() {
    enum Next {
      case trim
      case look(afterNanos: UInt64)
    }
    let time = now()
    let next = state.withLock { state -> Next in
      let since = state.pendingSince ?? time
      let quietFor = time >= state.lastCloseNanos ? time - state.lastCloseNanos : 0
      if quietFor >= Self.quietNanos || time - since >= Self.longestWaitNanos {
        state.pendingSince = nil
        state.closedSinceTrim = 0
        return .trim
      }
      return .look(afterNanos: Self.quietNanos - quietFor)
    }
    switch next {
    case .trim: trim()
    case .look(let nanos): schedule(nanos) { [self] in check() }
    }
  }
}
