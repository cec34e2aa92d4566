import CShims
import Glibc

/// An IPv4 or IPv6 socket address, parsed from `HOST:PORT` or `[V6HOST]:PORT`.
public struct SocketAddress: Sendable, Hashable, CustomStringConvertible {
  /// The numeric host, for example "127.0.0.1" or "::1".
  public let host: String
  public let port: UInt16
  public let isIPv6: Bool

  public init(host: String, port: UInt16) throws(AddressError) {
    var v4 = in_addr()
    var v6 = in6_addr()
    if inet_pton(AF_INET, host, &v4) == 1 {
      self.init(unchecked: host, port: port, isIPv6: false)
    } else if inet_pton(AF_INET6, host, &v6) == 1 {
      self.init(unchecked: host, port: port, isIPv6: true)
    } else if host == "localhost" {
      self.init(unchecked: "127.0.0.1", port: port, isIPv6: false)
    } else {
      throw AddressError(text: host, why: "not a numeric IPv4 or IPv6 address")
    }
  }

  private init(unchecked host: String, port: UInt16, isIPv6: Bool) {
    self.host = host
    self.port = port
    self.isIPv6 = isIPv6
  }

  /// Parses `HOST:PORT`; IPv6 hosts go in brackets.
  public init(parsing text: String) throws(AddressError) {
    let hostPart: Substring
    let portPart: Substring
    if text.hasPrefix("[") {
      guard let close = text.firstIndex(of: "]"),
        text[text.index(after: close)...].hasPrefix(":")
      else { throw AddressError(text: text, why: "expected [IPv6]:PORT") }
      hostPart = text[text.index(after: text.startIndex)..<close]
      portPart = text[text.index(close, offsetBy: 2)...]
    } else {
      guard let colon = text.lastIndex(of: ":") else {
        throw AddressError(text: text, why: "expected HOST:PORT")
      }
      hostPart = text[..<colon]
      portPart = text[text.index(after: colon)...]
      if hostPart.contains(":") { throw AddressError(text: text, why: "IPv6 hosts need brackets") }
    }
    guard let port = UInt16(portPart) else {
      throw AddressError(text: text, why: "port must be 0...65535")
    }
    try self.init(host: String(hostPart), port: port)
  }

  /// Reads a kernel-filled address.
  init?(storage: sockaddr_storage) {
    var storage = storage
    var buf = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
    switch Int32(storage.ss_family) {
    case AF_INET:
      let (addr, port) = withUnsafePointer(to: &storage) {
        $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { ($0.pointee.sin_addr, $0.pointee.sin_port) }
      }
      var a = addr
      guard inet_ntop(AF_INET, &a, &buf, socklen_t(buf.count)) != nil else { return nil }
      self.init(unchecked: CString.decode(buf), port: UInt16(bigEndian: port), isIPv6: false)
    case AF_INET6:
      let (addr, port) = withUnsafePointer(to: &storage) {
        $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
          ($0.pointee.sin6_addr, $0.pointee.sin6_port)
        }
      }
      var a = addr
      guard inet_ntop(AF_INET6, &a, &buf, socklen_t(buf.count)) != nil else { return nil }
      self.init(unchecked: CString.decode(buf), port: UInt16(bigEndian: port), isIPv6: true)
    default:
      return nil
    }
  }

  /// The raw address bytes (4 or 16), for CIDR matching.
  public var bytes: [UInt8] {
    if isIPv6 {
      var v6 = in6_addr()
      _ = inet_pton(AF_INET6, host, &v6)
      return withUnsafeBytes(of: &v6) { Array($0) }
    }
    var v4 = in_addr()
    _ = inet_pton(AF_INET, host, &v4)
    return withUnsafeBytes(of: &v4) { Array($0) }
  }

  /// Whether this is a loopback address: 127.0.0.0/8 or ::1 (`localhost` parses to
  /// 127.0.0.1). Only the host can reach such an address.
  public var isLoopback: Bool {
    let raw = bytes
    return isIPv6 ? raw == [UInt8](repeating: 0, count: 15) + [1] : raw.first == 127
  }

  /// Calls `body` with a sockaddr for this address.
  func withSockAddr<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) throws -> R) rethrows -> R {
    if isIPv6 {
      var sa = sockaddr_in6()
      sa.sin6_family = sa_family_t(AF_INET6)
      sa.sin6_port = port.bigEndian
      _ = inet_pton(AF_INET6, host, &sa.sin6_addr)
      return try Self.asSockAddr(&sa, body)
    }
    var sa = sockaddr_in()
    sa.sin_family = sa_family_t(AF_INET)
    sa.sin_port = port.bigEndian
    _ = inet_pton(AF_INET, host, &sa.sin_addr)
    return try Self.asSockAddr(&sa, body)
  }

  /// Calls `body` with `address` (a `sockaddr_in` or `sockaddr_in6`) seen as the generic
  /// `sockaddr` the socket calls take, and its length.
  private static func asSockAddr<Address, R>(
    _ address: inout Address, _ body: (UnsafePointer<sockaddr>, socklen_t) throws -> R
  ) rethrows -> R {
    try withUnsafePointer(to: &address) {
      try $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        try body($0, socklen_t(MemoryLayout<Address>.size))
      }
    }
  }

  /// `HOST:PORT`, with brackets around IPv6 hosts.
  public var description: String { isIPv6 ? "[\(host)]:\(port)" : "\(host):\(port)" }
}

/// A listen or connect address that does not parse.
public struct AddressError: Error, CustomStringConvertible, Sendable {
  public let text: String
  public let why: String
  public var description: String { "invalid address \"\(text)\": \(why)" }
}
