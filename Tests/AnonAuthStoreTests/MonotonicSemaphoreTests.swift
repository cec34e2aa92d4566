import Dispatch
import Foundation
import Testing

@testable import AnonAuthStore

@Suite struct MonotonicSemaphoreTests {
  @Test func aTimedWaitRunsOutWithoutASignal() {
    let semaphore = MonotonicSemaphore()
    let started = DispatchTime.now().uptimeNanoseconds
    #expect(!semaphore.wait(nanoseconds: 20_000_000))
    #expect(DispatchTime.now().uptimeNanoseconds - started >= 20_000_000)
  }

  @Test func aSignalEndsATimedWaitAndIsCountedOnce() {
    let semaphore = MonotonicSemaphore()
    semaphore.signal()
    #expect(semaphore.wait(nanoseconds: 60_000_000_000))  // taken at once, not after a minute
    #expect(!semaphore.wait(nanoseconds: 1_000_000))  // the one signal is spent
  }

  @Test func aSignalFromAnotherThreadWakesAWait() async {
    let semaphore = MonotonicSemaphore()
    let woke = Flag()
    let waiter = Thread {
      semaphore.wait()
      woke.set()
    }
    waiter.start()
    semaphore.signal()
    for _ in 0..<1_000 where !woke.isSet { try? await Task.sleep(for: .milliseconds(5)) }
    #expect(woke.isSet)
  }

  @Test func waitsLongerThanASecondCarryIntoTheSeconds() {
    // 1.9 s + the current nanoseconds must carry into tv_sec; a signal ends it early.
    let semaphore = MonotonicSemaphore()
    semaphore.signal()
    #expect(semaphore.wait(nanoseconds: 1_900_000_000))
  }
}
