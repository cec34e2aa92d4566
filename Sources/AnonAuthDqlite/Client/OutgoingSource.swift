import Glibc
import Synchronization

/// The local address this daemon's outgoing cluster connections leave from: the host of
/// its `--cluster-listen`, when that names one IP address.
///
/// Why: a peer then sees each node's connections come from the address the node is known
/// by, so a firewall (or a test's proxy, which cuts the link from one node to another by
/// the source address) can tell the nodes apart even when they share a machine. Without
/// it the kernel picks the source, and on loopback every node would look like 127.0.0.1.
///
/// A wildcard or a name sets nothing (the kernel chooses, as before). A loopback source
/// is used only towards loopback destinations and a routable one only towards routable
/// ones: a packet from 127.0.0.2 cannot leave the machine. Set once at start, read by
/// every connect in the process.
public enum OutgoingSource {
  private static let host = Mutex<String?>(nil)

  /// Takes the source from `listenAddress` ("host:port"); clears it for a wildcard, a
  /// name or anything that is not an IP address.
  public static func use(listenAddress: String) {
    let parsed = try? DqliteSocket.split(listenAddress).host
    let chosen = parsed.flatMap { candidate -> String? in
      guard let (_, address) = numeric(candidate), !isWildcard(address) else { return nil }
      return candidate
    }
    host.withLock { $0 = chosen }
  }

  /// The source in use, if any.
  public static var current: String? { host.withLock { $0 } }

  /// Binds `fd`, about to connect to `destination`, to the source when one is set and
  /// fits the destination. A failed bind leaves the kernel's choice: the connection is
  /// worth more than its source.
  static func bind(_ fd: Int32, towards destination: UnsafePointer<sockaddr>) {
    guard let source = current, let (family, address) = numeric(source) else { return }
    guard Int32(destination.pointee.sa_family) == family,
      isLoopback(address) == isLoopback(destination: destination)
    else { return }
    var storage = address
    _ = withUnsafePointer(to: &storage) { pointer in
      pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        Glibc.bind(
          fd, $0,
          family == AF_INET
            ? socklen_t(MemoryLayout<sockaddr_in>.size)
            : socklen_t(MemoryLayout<sockaddr_in6>.size))
      }
    }
  }

  /// `text` as a socket address with port 0 (any), and its family; nil if not numeric.
  private static func numeric(_ text: String) -> (Int32, sockaddr_storage)? {
    var v4 = in_addr()
    if inet_pton(AF_INET, text, &v4) == 1 {
      return (AF_INET, storage(AF_INET) { (address: inout sockaddr_in) in address.sin_addr = v4 })
    }
    var v6 = in6_addr()
    if inet_pton(AF_INET6, text, &v6) == 1 {
      return (AF_INET6, storage(AF_INET6) { (address: inout sockaddr_in6) in address.sin6_addr = v6 })
    }
    return nil
  }

  /// A zeroed `sockaddr_storage` of `family` holding an `Address` (`sockaddr_in` or
  /// `sockaddr_in6`) whose address `fill` sets.
  private static func storage<Address>(_ family: Int32, _ fill: (inout Address) -> Void) -> sockaddr_storage {
    var storage = sockaddr_storage()
    withUnsafeMutablePointer(to: &storage) {
      $0.withMemoryRebound(to: Address.self, capacity: 1) { fill(&$0.pointee) }
    }
    storage.ss_family = sa_family_t(family)
    return storage
  }

  private static func isWildcard(_ storage: sockaddr_storage) -> Bool {
    bytes(storage).allSatisfy { $0 == 0 }
  }

  private static func isLoopback(_ storage: sockaddr_storage) -> Bool {
    let address = bytes(storage)
    return address.count == 4 ? address[0] == 127 : address == [UInt8](repeating: 0, count: 15) + [1]
  }

  private static func isLoopback(destination: UnsafePointer<sockaddr>) -> Bool {
    var storage = sockaddr_storage()
    let length =
      Int32(destination.pointee.sa_family) == AF_INET
      ? MemoryLayout<sockaddr_in>.size : MemoryLayout<sockaddr_in6>.size
    withUnsafeMutableBytes(of: &storage) { target in
      target.copyMemory(from: UnsafeRawBufferPointer(start: destination, count: length))
    }
    return isLoopback(storage)
  }

  /// The address bytes of an IPv4 or IPv6 socket address (4 or 16).
  private static func bytes(_ storage: sockaddr_storage) -> [UInt8] {
    var copy = storage
    return withUnsafePointer(to: &copy) { pointer in
      if Int32(storage.ss_family) == AF_INET {
        return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
          withUnsafeBytes(of: $0.pointee.sin_addr) { Array($0) }
        }
      }
      return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
        withUnsafeBytes(of: $0.pointee.sin6_addr) { Array($0) }
      }
    }
  }
}
