import CShims
import Dispatch
import Synchronization

/// Gives freed heap back to the system after a burst of connections is gone. glibc keeps
/// freed memory in its arenas: a flood of 1,600 abandoned TLS handshakes left the daemon
/// at 150 MiB resident long after every connection had closed (40 MiB after
/// `malloc_trim`). After `closesPerTrim` closed connections a trim is scheduled
/// `delay` later, on a utility queue (it walks the arenas; never on an event loop), so
/// there is at most one trim per `delay` and one after each burst.
final class MemoryTrimmer: Sendable {
  static let closesPerTrim = 256
  static let delay = DispatchTimeInterval.seconds(2)

  private let closedSinceTrim = Atomic<Int>(0)
  private let pending = Atomic<Bool>(false)

  func connectionClosed() {
    guard closedSinceTrim.add(1, ordering: .relaxed).newValue >= Self.closesPerTrim,
      pending.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged
    else { return }
    DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + Self.delay) { [self] in
      closedSinceTrim.store(0, ordering: .relaxed)
      pending.store(false, ordering: .relaxed)
      _ = anonauth_malloc_trim()
    }
  }
}
