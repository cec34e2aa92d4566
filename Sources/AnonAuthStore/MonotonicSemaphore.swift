import CShims
import Glibc

/// A counting semaphore whose timed wait is measured on the monotonic clock.
///
/// `DispatchSemaphore.wait(timeout:)` ends up in `sem_timedwait`, whose deadline is on the
/// wall clock: a clock stepped back during the writer's commit delay would stretch the
/// hold by the step, and the delay promises that no write waits longer than it.
final class MonotonicSemaphore: @unchecked Sendable {
  // @unchecked Sendable is safe: the sem_t is allocated once, used only through sem_*
  // calls (which are thread-safe), and destroyed in deinit, when no thread holds a
  // reference any more.
  private let semaphore: UnsafeMutablePointer<sem_t>

  init() {
    semaphore = .allocate(capacity: 1)
    sem_init(semaphore, 0, 0)
  }

  deinit {
    sem_destroy(semaphore)
    semaphore.deallocate()
  }

  func signal() { sem_post(semaphore) }

  func wait() { anonauth_sem_wait(semaphore) }

  /// - Returns: true when signalled, false when `nanoseconds` ran out first.
  func wait(nanoseconds: UInt64) -> Bool {
    anonauth_sem_wait_monotonic(semaphore, nanoseconds) == 0
  }
}
