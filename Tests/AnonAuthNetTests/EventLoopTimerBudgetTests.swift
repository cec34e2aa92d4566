import AnonAuthNet
import Foundation
import Synchronization
import Testing

/// Timers that fall due together (a flood of abandoned handshakes timing out) run a
/// bounded number per turn, so the loop's sockets are served in between.
@Suite struct EventLoopTimerBudgetTests {
  @Test func aCrowdOfDueTimersRunsAFewPerTurn() throws {
    let loop = try EventLoop(name: "timer-budget-test")
    loop.start()
    defer { loop.stopAndWait() }
    let crowd = 3 * EventLoop.timersPerTurn + 5
    let done = DispatchSemaphore(value: 0)
    let fired = Mutex(0)
    let firedBeforeTheNextTurn = Mutex<Int?>(nil)
    loop.execute {
      for i in 0..<crowd {
        loop.schedule(afterNanos: 1_000_000) {
          let count = fired.withLock { count -> Int in
            count += 1
            return count
          }
          if i == 0 {
            // Runs at the start of the next turn: counts the timers of the first one.
            loop.runOnNextIteration {
              firedBeforeTheNextTurn.withLock { $0 = fired.withLock { $0 } }
            }
          }
          if count == crowd { done.signal() }
        }
      }
      usleep(5_000)  // every timer is due before the loop next looks
    }
    #expect(done.wait(timeout: .now() + 60) == .success)  // bounds a hang only
    #expect(fired.withLock { $0 } == crowd)
    #expect(firedBeforeTheNextTurn.withLock { $0 } == EventLoop.timersPerTurn)
  }
}
