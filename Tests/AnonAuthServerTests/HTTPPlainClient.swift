import Foundation
import Glibc

/// A plain-TCP HTTP/1.1 client for the emulator listener in tests: raw requests out,
/// responses framed by `Content-Length` in, over one connection. Its reads block, so
/// they run on a thread of their own: blocked on the cooperative pool (two threads on
/// this machine), they starved the very handler tasks the server had to run to answer.
final class HTTPPlainClient: @unchecked Sendable {
  // @unchecked Sendable is safe: each test uses its client from one task, one call at a
  // time; the reading thread has it alone until the awaited call returns.
  struct Failure: Error {
    let what: String
  }

  struct Response {
    let status: Int
    let headers: [String: String]
    let body: [UInt8]
  }

  private let fd: Int32
  private var buffer: [UInt8] = []

  init(_ address: String) throws {
    let parts = address.split(separator: ":")
    guard parts.count == 2, let port = UInt16(parts[1]) else { throw Failure(what: "address") }
    fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var timeout = timeval(tv_sec: 30, tv_usec: 0)
    _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    var sa = sockaddr_in()
    sa.sin_family = sa_family_t(AF_INET)
    sa.sin_port = port.bigEndian
    inet_pton(AF_INET, String(parts[0]), &sa.sin_addr)
    let rc = withUnsafePointer(to: &sa) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    guard rc == 0 else {
      close(fd)
      throw Failure(what: "connect")
    }
  }

  deinit { close(fd) }

  func send(_ text: String) throws { try send(Array(text.utf8)) }

  func send(_ bytes: [UInt8]) throws {
    let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    guard n == bytes.count else { throw Failure(what: "send") }
  }

  /// Closes the write side: the server sees the peer leave.
  func shutdownWrite() { _ = shutdown(fd, Int32(SHUT_WR)) }

  func response() async throws -> Response {
    try await Self.offPool { try self.readResponse() }
  }

  /// Whether the server closed the connection (reads end) with nothing more sent.
  func isClosedByServer() async -> Bool {
    (try? await Self.offPool { self.readUntilClosed() }) ?? false
  }

  private static func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
      Thread { continuation.resume(with: Result { try body() }) }.start()
    }
  }

  private func readResponse() throws -> Response {
    let blank = Array("\r\n\r\n".utf8)
    var end: Int?
    while end == nil {
      if buffer.count >= 4 { end = (0...(buffer.count - 4)).first { Array(buffer[$0..<($0 + 4)]) == blank } }
      if end == nil { try fill() }
    }
    guard let end else { throw Failure(what: "head") }
    let lines = String(decoding: buffer[0..<end], as: UTF8.self).components(separatedBy: "\r\n")
    let status = Int(lines[0].split(separator: " ")[1]) ?? 0
    var headers: [String: String] = [:]
    for line in lines.dropFirst() {
      guard let colon = line.firstIndex(of: ":") else { continue }
      headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
        in: .whitespaces)
    }
    buffer.removeFirst(end + 4)
    let length = Int(headers["content-length"] ?? "0") ?? 0
    while buffer.count < length { try fill() }
    let body = Array(buffer[0..<length])
    buffer.removeFirst(length)
    return Response(status: status, headers: headers, body: body)
  }

  private func readUntilClosed() -> Bool {
    var chunk = [UInt8](repeating: 0, count: 4096)
    while true {
      let n = recv(fd, &chunk, chunk.count, 0)
      if n == 0 { return buffer.isEmpty }
      if n < 0 { return errno == ECONNRESET }
      buffer += chunk[0..<n]
    }
  }

  private func fill() throws {
    var chunk = [UInt8](repeating: 0, count: 16384)
    let n = recv(fd, &chunk, chunk.count, 0)
    guard n > 0 else { throw Failure(what: "closed") }
    buffer += chunk[0..<n]
  }
}
