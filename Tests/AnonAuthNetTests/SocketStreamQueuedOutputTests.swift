import AnonAuthNet
import Foundation
import Glibc
import Synchronization
import Testing

/// The stream core reports the bytes its peer has not taken (what the server charges to
/// its byte budgets), and reports them back to nothing as the peer reads and at the close.
@Suite struct SocketStreamQueuedOutputTests {
  final class Reports: Sendable {
    let values = Mutex<[Int]>([])
    var last: Int { values.withLock { $0.last ?? -1 } }
  }

  @Test func bytesThePeerDoesNotTakeAreReportedAndGivenBack() async throws {
    var fds: [Int32] = [0, 0]
    #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
    let (ours, theirs) = (fds[0], fds[1])
    _ = fcntl(ours, F_SETFL, fcntl(ours, F_GETFL) | O_NONBLOCK)
    _ = fcntl(theirs, F_SETFL, fcntl(theirs, F_GETFL) | O_NONBLOCK)
    let loop = try EventLoop(name: "queued-test")
    loop.start()
    defer { loop.stopAndWait() }
    let reports = Reports()
    let streamBox = Mutex<UncheckedBox<PlainConnection>?>(nil)
    let opened = DispatchSemaphore(value: 0)
    loop.execute {
      let stream = PlainConnection(fd: ours, loop: loop, peer: nil)
      stream.queuedOutputObserver = { bytes in reports.values.withLock { $0.append(bytes) } }
      stream.start()
      // Far more than the socket pair's buffers take: the rest stays queued here.
      stream.send(bytes: [UInt8](repeating: 7, count: 4 << 20))
      streamBox.withLock { $0 = UncheckedBox(stream) }
      opened.signal()
    }
    #expect(opened.wait(timeout: .now() + 60) == .success)
    for _ in 0..<500 where reports.last <= 0 { try await Task.sleep(for: .milliseconds(10)) }
    #expect(reports.last > 0, "nothing reported while the peer read nothing")
    // The peer reads everything: the report goes back to 0. Read without blocking (a
    // blocked cooperative thread could stall other suites), within a generous bound.
    var buffer = [UInt8](repeating: 0, count: 1 << 16)
    var read = 0
    for _ in 0..<60_000 where read < 4 << 20 {
      let n = recv(theirs, &buffer, buffer.count, 0)
      if n > 0 {
        read += n
      } else if n == 0 {
        break
      } else {
        try await Task.sleep(for: .milliseconds(1))
      }
    }
    #expect(read == 4 << 20)
    for _ in 0..<500 where reports.last != 0 { try await Task.sleep(for: .milliseconds(10)) }
    #expect(reports.last == 0)
    // Queued again, then closed: the close reports 0.
    let closed = DispatchSemaphore(value: 0)
    loop.execute {
      let stream = streamBox.withLock { $0?.value }
      stream?.send(bytes: [UInt8](repeating: 7, count: 4 << 20))
      loop.runOnNextIteration {
        stream?.close(error: nil)
        closed.signal()
      }
    }
    #expect(closed.wait(timeout: .now() + 60) == .success)
    #expect(reports.values.withLock { $0.filter { $0 > 0 }.count } >= 2)
    #expect(reports.last == 0)
    Glibc.close(theirs)
  }
}
