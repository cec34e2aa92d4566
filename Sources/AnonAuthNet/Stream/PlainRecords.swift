import CShims
import Glibc

/// Plaintext: `recv` and `send` on the descriptor (the emulator listener, loopback
/// only).
final class PlainRecords: RecordLayer {
  private let fd: Int32

  init(fd: Int32) { self.fd = fd }

  var needsHandshake: Bool { false }
  func handshake() -> RecordIO { .transferred(0) }

  func read(into buffer: UnsafeMutableRawBufferPointer) -> RecordIO {
    let n = Glibc.recv(fd, buffer.baseAddress, buffer.count, Int32(MSG_DONTWAIT))
    if n > 0 { return .transferred(n) }
    if n == 0 { return .closed }
    if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { return .wantRead }
    return .failed(SystemError("recv", errno: errno))
  }

  func write(_ bytes: UnsafeRawBufferPointer) -> RecordIO {
    let n = Glibc.send(fd, bytes.baseAddress, bytes.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL))
    if n > 0 { return .transferred(n) }
    if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) { return .wantWrite }
    return .failed(SystemError("send", errno: errno))
  }

  var hasBufferedInput: Bool { false }

  func shutdownWrite() { _ = Glibc.shutdown(fd, Int32(SHUT_WR)) }

  var negotiatedProtocol: String? { nil }
  var verifiedPeerName: String? { nil }
  func release() {}
}
