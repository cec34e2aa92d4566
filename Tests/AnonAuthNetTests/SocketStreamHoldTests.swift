import AnonAuthNet
import Foundation
import Glibc
import Synchronization
import Testing

/// An owner holds a stream's reading while it serves a request (HTTP/1.1). A peer that
/// waits for its answer sends nothing meanwhile: holding and releasing then change no
/// epoll interest. Input that does come while held is not read until the release (the
/// interest is dropped then, so level-triggered input does not wake the loop for ever),
/// and is delivered after it.
@Suite struct SocketStreamHoldTests {
  // @unchecked Sendable is safe: `stream` is set and used on the loop's thread only;
  // `received` is a Mutex.
  final class Owner: ByteStreamDelegate, @unchecked Sendable {
    let received = Mutex<[UInt8]>([])
    var stream: PlainConnection?

    func stream(_ stream: any ByteStream, didReceive bytes: UnsafeRawBufferPointer) {
      received.withLock { $0.append(contentsOf: bytes) }
    }

    func streamDidClose(_ stream: any ByteStream, error: (any Error)?) {}
  }

  /// Runs `body` on the loop's thread and hands back its result.
  static func onLoop<T: Sendable>(_ loop: EventLoop, _ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in loop.execute { continuation.resume(returning: body()) } }
  }

  @Test func holdingCostsNoInterestChangeUntilInputComes() async throws {
    var fds: [Int32] = [0, 0]
    #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
    let (ours, theirs) = (fds[0], fds[1])
    _ = fcntl(ours, F_SETFL, fcntl(ours, F_GETFL) | O_NONBLOCK)
    let loop = try EventLoop(name: "hold-test")
    let owner = Owner()
    loop.start()
    defer { loop.stopAndWait() }
    let changes = await Self.onLoop(loop) {
      let stream = PlainConnection(fd: ours, loop: loop, peer: nil)
      stream.delegate = owner
      owner.stream = stream
      stream.start()
      let before = loop.interestChanges
      for _ in 0..<10 {
        stream.readingHeld = true
        stream.readingHeld = false
      }
      stream.readingHeld = true
      return loop.interestChanges - before
    }
    #expect(changes == 0, "holding and releasing with no input changed the interest \(changes) times")

    // Input while held: not delivered, and the interest is dropped once.
    let sent = Array("abc".utf8)
    #expect(sent.withUnsafeBytes { send(theirs, $0.baseAddress, $0.count, 0) } == sent.count)
    var dropped = false
    for _ in 0..<6_000 {
      dropped = await Self.onLoop(loop) { loop.interestChanges > 0 }
      if dropped { break }
      try await Task.sleep(for: .milliseconds(10))
    }
    #expect(dropped, "input while held did not drop the read interest")
    #expect(owner.received.withLock { $0 }.isEmpty, "input was read while held")

    // Released: watched again, and what came is delivered.
    await Self.onLoop(loop) { owner.stream?.readingHeld = false }
    for _ in 0..<6_000 where owner.received.withLock({ $0 }) != sent {
      try await Task.sleep(for: .milliseconds(10))
    }
    #expect(owner.received.withLock { $0 } == sent)
    #expect(await Self.onLoop(loop) { loop.interestChanges } == 2)
    await Self.onLoop(loop) { owner.stream?.close(error: nil) }
    Glibc.close(theirs)
  }
}
