import Foundation
import Glibc

/// The blocking IPv4 TCP connect the test HTTP clients share: the daemon under test listens
/// on `127.0.0.1:port`, and a test speaks raw bytes to it, so none of the product's
/// non-blocking machinery stands between the test and what it checks.
public enum LoopbackSocket {
  /// Why a connection or a read failed, in words for the test's log.
  public struct Failure: Error, CustomStringConvertible {
    public let description: String

    public init(_ description: String) { self.description = description }
  }

  /// A connected socket to `address` (`a.b.c.d:port`), its reads given up after
  /// `receiveTimeout` seconds when one is set. The caller closes it.
  public static func connect(_ address: String, receiveTimeout: Int? = nil) throws(Failure) -> Int32 {
    let parts = address.split(separator: ":")
    guard parts.count == 2, let port = UInt16(parts[1]) else { throw Failure("address \(address)") }
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw Failure("socket") }
    if let receiveTimeout {
      var timeout = timeval(tv_sec: receiveTimeout, tv_usec: 0)
      _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }
    var sa = sockaddr_in()
    sa.sin_family = sa_family_t(AF_INET)
    sa.sin_port = port.bigEndian
    inet_pton(AF_INET, String(parts[0]), &sa.sin_addr)
    let rc = withUnsafePointer(to: &sa) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    guard rc == 0 else {
      close(fd)
      throw Failure("connect \(address)")
    }
    return fd
  }

  /// Everything the peer sends until it closes (or the read fails).
  public static func readToEnd(_ fd: Int32) -> [UInt8] {
    var data: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
      let n = recv(fd, &buffer, buffer.count, 0)
      if n <= 0 { return data }
      data.append(contentsOf: buffer[0..<n])
    }
  }
}
