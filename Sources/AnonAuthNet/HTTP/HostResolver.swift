import Glibc

/// getaddrinfo for the outbound client. It blocks (the resolver has its own timeouts),
/// which is why it only ever runs on the client's I/O threads.
enum HostResolver {
  /// The host's addresses, IPv4 and IPv6, in the resolver's order; a numeric host is
  /// returned as it is.
  static func resolve(host: String, port: UInt16) throws(HTTPClientError) -> [SocketAddress] {
    if let numeric = try? SocketAddress(host: host, port: port), host != "localhost" { return [numeric] }
    var hints = addrinfo()
    hints.ai_family = AF_UNSPEC
    hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
    var list: UnsafeMutablePointer<addrinfo>?
    guard getaddrinfo(host, nil, &hints, &list) == 0, let first = list else { throw .resolve(host: host) }
    defer { freeaddrinfo(first) }
    var out: [SocketAddress] = []
    var cursor: UnsafeMutablePointer<addrinfo>? = first
    while let entry = cursor {
      if let sa = entry.pointee.ai_addr {
        var storage = sockaddr_storage()
        withUnsafeMutableBytes(of: &storage) { raw in
          raw.copyMemory(
            from: UnsafeRawBufferPointer(start: sa, count: min(Int(entry.pointee.ai_addrlen), raw.count)))
        }
        if let address = SocketAddress(storage: storage),
          let withPort = try? SocketAddress(host: address.host, port: port),
          !out.contains(withPort)
        {
          out.append(withPort)
        }
      }
      cursor = entry.pointee.ai_next
    }
    guard !out.isEmpty else { throw .resolve(host: host) }
    return out
  }
}
