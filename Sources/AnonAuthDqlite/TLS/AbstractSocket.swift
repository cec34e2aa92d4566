import Glibc

/// Linux abstract unix sockets, named "@name" as libdqlite names them: the node listens
/// on one so that only this process reaches it (no file, no port; another process cannot
/// connect, since the name lives in this network namespace but libdqlite accepts only
/// connections from its own process on it).
enum AbstractSocket {
  /// A blocking, close-on-exec stream socket connected to `name` ("@..."). The address
  /// length counts the name exactly, as libdqlite's bind does: abstract names are
  /// compared byte for byte, trailing NULs included.
  static func connect(_ name: String) throws(DqliteError) -> Int32 {
    guard name.hasPrefix("@") else { throw .io("\(name) is not an abstract socket name") }
    let bytes = Array(name.utf8.dropFirst())
    var address = sockaddr_un()
    let capacity = MemoryLayout.size(ofValue: address.sun_path)
    guard !bytes.isEmpty, bytes.count + 1 <= capacity else { throw .io("abstract socket name \(name)") }
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { path in
      path[0] = 0
      for (index, byte) in bytes.enumerated() { path[index + 1] = byte }
    }
    let length = socklen_t(MemoryLayout<sa_family_t>.size + 1 + bytes.count)
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { throw .io("socket: \(String(cString: strerror(errno)))") }
    let rc = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, length) }
    }
    guard rc == 0 else {
      let reason = String(cString: strerror(errno))
      Glibc.close(fd)
      throw .io("connect \(name): \(reason)")
    }
    return fd
  }
}
