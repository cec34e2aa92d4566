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
}
