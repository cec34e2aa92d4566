import AnonAuthNet
import Foundation
import Synchronization
import Testing

/// A delay too large to add to the clock (a client's `grpc-timeout` of 99999999H is
/// UInt64.max nanoseconds) schedules a timer that never falls due, not one already due.
@Suite struct EventLoopScheduleSaturationTests {
  @Test func aHugeDelayDoesNotWrapIntoThePast() throws {
    let loop = try EventLoop(name: "schedule-saturation-test")
    loop.start()
    defer { loop.stopAndWait() }
    let done = DispatchSemaphore(value: 0)
    let hugeFired = Mutex(false)
    let hugeFiredFirst = Mutex<Bool?>(nil)
    loop.execute {
      loop.schedule(afterNanos: .max) { hugeFired.withLock { $0 = true } }
      loop.schedule(afterNanos: UInt64.max - 1) { hugeFired.withLock { $0 = true } }
      // Due in a millisecond: timers run in deadline order, so a wrapped deadline (in
      // the past) would have run before this one.
      loop.schedule(afterNanos: 1_000_000) {
        hugeFiredFirst.withLock { $0 = hugeFired.withLock { $0 } }
        done.signal()
      }
    }
    #expect(done.wait(timeout: .now() + 60) == .success)  // bounds a hang only
    #expect(hugeFiredFirst.withLock { $0 } == false)
  }
}
