import AnonAuthNet
import Foundation
import Glibc
import Synchronization
import Testing

/// A stream reads at most its `readBudgetBytes` in one turn of its loop, then yields: what
/// one peer's bytes cost to decode is what every other connection of the loop waits
/// behind, so an owner whose bytes are costly (HTTP/2's header blocks) sets less.
@Suite struct SocketStreamReadBudgetTests {
  /// Counts the bytes delivered in each turn of the loop (a turn ends at its
  /// `atEndOfIteration`).
  // @unchecked Sendable is safe: `current` and `open` are touched only on the loop's
  // thread (the stream's callbacks and the loop's end of iteration); `turns` is a Mutex.
  final class TurnTally: ByteStreamDelegate, @unchecked Sendable {
    let turns = Mutex<[Int]>([])
    private var current = 0
    private var open = false
    let loop: EventLoop

    init(loop: EventLoop) { self.loop = loop }

    func stream(_ stream: any ByteStream, didReceive bytes: UnsafeRawBufferPointer) {
      current += bytes.count
      guard !open else { return }
      open = true
      loop.atEndOfIteration { [self] in
        let bytes = current
        turns.withLock { $0.append(bytes) }
        current = 0
        open = false
      }
    }

    func streamDidClose(_ stream: any ByteStream, error: (any Error)?) {}
  }

  @Test(arguments: [4096, 10_000])
  func aTurnReadsNoMoreThanTheBudget(budget: Int) async throws {
    var fds: [Int32] = [0, 0]
    #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
    let (ours, theirs) = (fds[0], fds[1])
    _ = fcntl(ours, F_SETFL, fcntl(ours, F_GETFL) | O_NONBLOCK)
    let loop = try EventLoop(name: "budget-test")
    // Everything the peer sends is in the socket before the stream starts reading, so
    // one turn could take it all (the loop's scratch buffer is 64 KiB a read).
    let total = 60_000
    let payload = [UInt8](repeating: 1, count: total)
    #expect(payload.withUnsafeBytes { send(theirs, $0.baseAddress, $0.count, 0) } == total)
    let tally = TurnTally(loop: loop)
    let streamBox = Mutex<UncheckedBox<PlainConnection>?>(nil)
    loop.start()
    defer { loop.stopAndWait() }
    loop.execute {
      let stream = PlainConnection(fd: ours, loop: loop, peer: nil)
      stream.readBudgetBytes = budget
      stream.delegate = tally
      stream.start()
      streamBox.withLock { $0 = UncheckedBox(stream) }
    }
    for _ in 0..<6_000 where tally.turns.withLock({ $0.reduce(0, +) }) < total {
      try await Task.sleep(for: .milliseconds(10))
    }
    let turns = tally.turns.withLock { $0 }
    #expect(turns.reduce(0, +) == total, "the stream stopped reading: \(turns)")
    #expect(turns.allSatisfy { $0 <= budget }, "a turn read past its budget: \(turns)")
    #expect(turns.count >= (total + budget - 1) / budget)
    let closed = DispatchSemaphore(value: 0)
    loop.execute {
      streamBox.withLock { $0?.value.close(error: nil) }
      closed.signal()
    }
    #expect(closed.wait(timeout: .now() + 60) == .success)
    Glibc.close(theirs)
  }

  /// Where each stream writes its name when it delivers (in the order they deliver).
  final class ArrivalLog: Sendable {
    let order = Mutex<[String]>([])
  }

  // @unchecked Sendable is safe: the streams call it on the loop's thread only; the log
  // is Sendable.
  final class Arrivals: ByteStreamDelegate, @unchecked Sendable {
    let log: ArrivalLog
    let name: String
    init(_ name: String, _ log: ArrivalLog) {
      self.name = name
      self.log = log
    }
    func stream(_ stream: any ByteStream, didReceive bytes: UnsafeRawBufferPointer) {
      log.order.withLock { $0.append(name) }
    }
    func streamDidClose(_ stream: any ByteStream, error: (any Error)?) {}
  }

  /// Two streams with input waiting when the loop looks: the deprioritized one is read
  /// after the other, whichever event epoll reports first.
  @Test(arguments: [["abuser", "bystander"], ["bystander", "abuser"]])
  func aDeprioritizedStreamIsReadAfterTheOthers(registrationOrder: [String]) async throws {
    let loop = try EventLoop(name: "deprioritized-test")
    let log = ArrivalLog()
    var peers: [Int32] = []
    var delegates: [(Int32, Arrivals)] = []
    for name in registrationOrder {
      var fds: [Int32] = [0, 0]
      #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
      _ = fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK)
      #expect(send(fds[1], "x", 1, 0) == 1)
      peers.append(fds[1])
      delegates.append((fds[0], Arrivals(name, log)))
    }
    let held = Mutex<[UncheckedBox<PlainConnection>]>([])
    let toStart = delegates
    loop.start()
    defer { loop.stopAndWait() }
    loop.execute {
      // Both registered in one task: their input is announced by the same epoll_wait.
      for (fd, delegate) in toStart {
        let stream = PlainConnection(fd: fd, loop: loop, peer: nil)
        stream.deprioritized = delegate.name == "abuser"
        stream.delegate = delegate
        stream.start()
        held.withLock { $0.append(UncheckedBox(stream)) }
      }
    }
    for _ in 0..<6_000 where log.order.withLock({ $0.count }) < 2 {
      try await Task.sleep(for: .milliseconds(10))
    }
    #expect(log.order.withLock { $0 } == ["bystander", "abuser"])
    let closed = DispatchSemaphore(value: 0)
    loop.execute {
      for box in held.withLock({ $0 }) { box.value.close(error: nil) }
      closed.signal()
    }
    #expect(closed.wait(timeout: .now() + 60) == .success)
    for fd in peers { Glibc.close(fd) }
  }
}
