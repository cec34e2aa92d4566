import Foundation
import Glibc

/// A plain-TCP HTTP/1.1 client for the emulator listener in tests: raw requests out,
/// responses framed by `Content-Length` in, over one connection. Its reads block, so
/// they run on a thread of their own: blocked on the cooperative pool (two threads on
/// this machine), they starved the very handler tasks the server had to run to answer.
public final class HTTPPlainClient: @unchecked Sendable {
  // @unchecked Sendable is safe: each test uses its client from one task, one call at a
  // time; the reading thread has it alone until the awaited call returns.
  public typealias Response = TestHTTPResponse

  private let fd: Int32
  private var framer = HTTPResponseFramer()

  public init(_ address: String) throws {
    fd = try LoopbackSocket.connect(address, receiveTimeout: 30)
  }

  deinit { close(fd) }

  public func send(_ text: String) throws { try send(Array(text.utf8)) }

  public func send(_ bytes: [UInt8]) throws {
    let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    guard n == bytes.count else { throw LoopbackSocket.Failure("send") }
  }

  /// Closes the write side: the server sees the peer leave.
  public func shutdownWrite() { _ = shutdown(fd, Int32(SHUT_WR)) }

  public func response() async throws -> Response {
    try await offPool { try self.readResponse() }
  }

  /// Whether the server closed the connection (reads end) with nothing more sent.
  public func isClosedByServer() async -> Bool {
    await offPool { self.readUntilClosed() }
  }

  private func readResponse() throws -> Response {
    try framer.next { try fill() }
  }

  private func readUntilClosed() -> Bool {
    var chunk = [UInt8](repeating: 0, count: 4096)
    while true {
      let n = recv(fd, &chunk, chunk.count, 0)
      if n == 0 { return framer.leftover.isEmpty }
      if n < 0 { return errno == ECONNRESET }
      framer.append(chunk[0..<n])
    }
  }

  private func fill() throws -> ArraySlice<UInt8> {
    var chunk = [UInt8](repeating: 0, count: 16384)
    let n = recv(fd, &chunk, chunk.count, 0)
    guard n > 0 else { throw LoopbackSocket.Failure("closed") }
    return chunk[0..<n]
  }
}
