import Foundation
import Glibc

/// Finds the sockets a node listens on, to make them close-on-exec.
///
/// libdqlite 1.11.1 opens its listening socket without close-on-exec: it calls
/// `fcntl(fd, FD_CLOEXEC)`, which reads the flags instead of setting them. A child
/// process started while a node runs would inherit the listener and keep the node's port
/// after the node stops, so the node could not bind it again. The socket is told by its
/// port, not by being new: other threads open and close descriptors meanwhile, and the
/// listener can take a number that was in use a moment before.
enum OpenDescriptors {
  /// The IPv4 or IPv6 sockets of this process bound to local `port` (from /proc/self/fd;
  /// none where it cannot be read). Descriptors that are not sockets fail getsockname.
  static func sockets(onPort port: UInt16) -> [Int32] {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
    return names.compactMap { Int32($0) }.filter { localPort(of: $0) == port }
  }

  /// Sets close-on-exec on every socket bound to `port` that lacks it.
  static func closeOnExec(socketsOnPort port: UInt16) {
    for fd in sockets(onPort: port) {
      let flags = fcntl(fd, F_GETFD)
      if flags >= 0 && flags & FD_CLOEXEC == 0 {
        _ = fcntl(fd, F_SETFD, flags | FD_CLOEXEC)
      }
    }
  }

  private static func localPort(of fd: Int32) -> UInt16? {
    var storage = sockaddr_storage()
    var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
    let named = withUnsafeMutablePointer(to: &storage) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    guard named == 0 else { return nil }
    let family = Int32(storage.ss_family)
    return withUnsafePointer(to: &storage) { pointer -> UInt16? in
      switch family {
      case AF_INET:
        pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
          UInt16(bigEndian: $0.pointee.sin_port)
        }
      case AF_INET6:
        pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
          UInt16(bigEndian: $0.pointee.sin6_port)
        }
      default:
        nil
      }
    }
  }
}
