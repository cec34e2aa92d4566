import CShims
import Glibc

/// Thin wrappers over the socket calls the event loop needs. Every descriptor is made
/// non-blocking and close-on-exec.
public enum Socket {
  /// A listening socket bound to `address` (port 0 picks one); returns the real address.
  public static func listen(
    on address: SocketAddress, backlog: Int32 = 4096
  ) throws(SystemError) -> (fd: Int32, bound: SocketAddress) {
    let family = address.isIPv6 ? AF_INET6 : AF_INET
    let fd = try retryingOnInterrupt("socket") {
      socket(
        family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    }
    var one: Int32 = 1
    _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
    if address.withSockAddr({ bind(fd, $0, $1) }) != 0 {
      let error = SystemError("bind \(address)")
      Glibc.close(fd)
      throw error
    }
    if Glibc.listen(fd, backlog) != 0 {
      let error = SystemError("listen")
      Glibc.close(fd)
      throw error
    }
    do {
      return (fd, try localAddress(of: fd))
    } catch {
      Glibc.close(fd)
      throw error
    }
  }

  /// Accepts one connection, or nil when none is waiting.
  public static func accept(_ listener: Int32) throws(SystemError) -> (fd: Int32, peer: SocketAddress?)? {
    var storage = sockaddr_storage()
    var len = socklen_t(MemoryLayout<sockaddr_storage>.size)
    while true {
      let fd = withUnsafeMutablePointer(to: &storage) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          anonauth_accept4(listener, $0, &len, Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue))
        }
      }
      if fd >= 0 {
        var one: Int32 = 1
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        var sendBuffer = acceptedSendBufferBytes
        _ = setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sendBuffer, socklen_t(MemoryLayout<Int32>.size))
        return (fd, SocketAddress(storage: storage))
      }
      let err = anonauth_errno()
      switch err {
      case EINTR: continue
      case EAGAIN, EWOULDBLOCK: return nil
      // The peer gave up before we accepted: not the listener's problem.
      case ECONNABORTED, EPROTO: continue
      default: throw SystemError("accept", errno: err)
      }
    }
  }

  /// The kernel send buffer of an accepted connection (Linux doubles it for its own
  /// bookkeeping). Autotuned, a loopback or LAN peer that never reads was taking about
  /// 8 MB of replies into the kernel before the connection's own 1 MiB output cap made the
  /// server stop reading it: that much work for a client that reads nothing. Replies here
  /// are small, so this bounds nothing a real client needs.
  public static let acceptedSendBufferBytes: Int32 = 128 * 1024

  /// Starts a non-blocking connect; completion shows as writability.
  public static func connect(to address: SocketAddress) throws(SystemError) -> Int32 {
    let family = address.isIPv6 ? AF_INET6 : AF_INET
    let fd = try retryingOnInterrupt("socket") {
      socket(
        family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    }
    var one: Int32 = 1
    _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    let rc = address.withSockAddr { Glibc.connect(fd, $0, $1) }
    if rc != 0 {
      let err = anonauth_errno()
      if err != EINPROGRESS && err != EINTR {
        Glibc.close(fd)
        throw SystemError("connect \(address)", errno: err)
      }
    }
    return fd
  }

  /// The pending error of a socket (SO_ERROR), 0 when none.
  public static func pendingError(_ fd: Int32) -> Int32 {
    var err: Int32 = 0
    var len = socklen_t(MemoryLayout<Int32>.size)
    if getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 { return anonauth_errno() }
    return err
  }

  public static func localAddress(of fd: Int32) throws(SystemError) -> SocketAddress {
    var storage = sockaddr_storage()
    var len = socklen_t(MemoryLayout<sockaddr_storage>.size)
    let rc = withUnsafeMutablePointer(to: &storage) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) }
    }
    guard rc == 0, let address = SocketAddress(storage: storage) else {
      throw SystemError("getsockname")
    }
    return address
  }

  /// Closes without retrying: Linux frees the descriptor even on EINTR.
  public static func close(_ fd: Int32) {
    _ = Glibc.close(fd)
  }

  /// Raises the soft limit on open descriptors to the hard limit, so that one process can
  /// hold the 10,000 connections the design asks for. Returns the soft limit in force.
  @discardableResult
  public static func raiseDescriptorLimit() -> Int {
    var limit = rlimit()
    guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1024 }
    if limit.rlim_cur < limit.rlim_max {
      var raised = limit
      raised.rlim_cur = limit.rlim_max
      if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
    }
    // RLIM_INFINITY and other huge values: more than any table of descriptors holds.
    let cap: rlim_t = 1 << 30
    return Int(limit.rlim_cur < cap ? limit.rlim_cur : cap)
  }
}
