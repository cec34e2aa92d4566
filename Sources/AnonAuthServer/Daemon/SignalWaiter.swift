import Dispatch
import Glibc
import Synchronization

/// Turns SIGTERM/SIGINT into an awaitable event: the signals are ignored at the process
/// level and observed through Dispatch sources, so no handler runs in signal context.
final class SignalWaiter: @unchecked Sendable {
  // @unchecked Sendable is safe: `sources` is set once in init and never changed (Dispatch
  // sources are thread-safe); the mutable part is behind the Mutex.
  private let sources: [any DispatchSourceSignal]
  private let state = Mutex<(fired: Int32?, waiter: CheckedContinuation<Int32, Never>?)>((nil, nil))

  init(signals: [Int32]) {
    var sources: [any DispatchSourceSignal] = []
    for number in signals {
      Glibc.signal(number, SIG_IGN)
      sources.append(DispatchSource.makeSignalSource(signal: number, queue: .global()))
    }
    self.sources = sources
    for (source, number) in zip(sources, signals) {
      source.setEventHandler { [weak self] in self?.fire(number) }
      source.resume()
    }
  }

  private func fire(_ number: Int32) {
    let waiter = state.withLock { state -> CheckedContinuation<Int32, Never>? in
      if state.fired == nil { state.fired = number }
      defer { state.waiter = nil }
      return state.waiter
    }
    waiter?.resume(returning: number)
  }

  /// The first signal received (returns at once if one already was).
  func next() async -> Int32 {
    await withCheckedContinuation { continuation in
      let fired = state.withLock { state -> Int32? in
        if let fired = state.fired { return fired }
        state.waiter = continuation
        return nil
      }
      if let fired { continuation.resume(returning: fired) }
    }
  }
}
