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
}
