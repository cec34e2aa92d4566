import AnonAuthNet
import Foundation
import Synchronization
import Testing

/// `runOnNextIteration`: work that yielded its turn runs on the next iteration without
/// waiting for an epoll event, and others' tasks run in between.
@Suite struct EventLoopYieldTests {
  @Test func yieldedWorkRunsWithoutAnEventAndLetsOthersIn() throws {
    let loop = try EventLoop(name: "yield-test")
    loop.start()
    defer { loop.stopAndWait() }
    let done = DispatchSemaphore(value: 0)
    let order = Mutex<[String]>([])
    loop.execute {
      var turns = 0
      func turn() {
        turns += 1
        order.withLock { $0.append("busy") }
        if turns == 1 {
          // Another task arrives while the busy one still has work left.
          loop.execute { order.withLock { $0.append("other") } }
        }
        if turns < 50 {
          loop.runOnNextIteration(turn)
        } else {
          done.signal()
        }
      }
      turn()
    }
    // Without the zero-timeout poll the loop would sleep in epoll_wait and never finish.
    #expect(done.wait(timeout: .now() + 60) == .success)  // bounds a hang only
    let seen = order.withLock { $0 }
    #expect(seen.filter { $0 == "busy" }.count == 50)
    let other = try #require(seen.firstIndex(of: "other"))
    #expect(other < seen.count - 1, "the other task waited for all the busy work: \(seen)")
  }

  /// Yielded work runs for at most `yieldedWorkNanosPerTurn` an iteration: pieces that
  /// each take longer run one an iteration, and another thread's task gets in after the
  /// first, however many are queued.
  @Test func yieldedWorkIsCutAtItsTimeBudgetAndOthersGetIn() throws {
    let loop = try EventLoop(name: "yield-budget-test")
    loop.start()
    defer { loop.stopAndWait() }
    let done = DispatchSemaphore(value: 0)
    let order = Mutex<[String]>([])
    let pieces = 20
    loop.execute {
      for index in 0..<pieces {
        loop.runOnNextIteration {
          // Longer than the budget, on any machine: the iteration stops after it.
          let until = MonotonicClock.now() + EventLoop.yieldedWorkNanosPerTurn
          while MonotonicClock.now() < until {}
          order.withLock { $0.append("piece \(index)") }
          if index == 0 { loop.execute { order.withLock { $0.append("other") } } }
          if index == pieces - 1 { done.signal() }
        }
      }
    }
    #expect(done.wait(timeout: .now() + 60) == .success)  // bounds a hang only
    let seen = order.withLock { $0 }
    #expect(
      seen.filter { $0.hasPrefix("piece") } == (0..<pieces).map { "piece \($0)" }, "in order, each once")
    #expect(seen.firstIndex(of: "other") == 1, "the other thread's task waited for the yielded work: \(seen)")
  }
}
