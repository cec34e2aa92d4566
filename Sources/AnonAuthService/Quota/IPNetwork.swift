import Glibc

/// An IPv4 or IPv6 network in CIDR notation, for `--trusted-proxies`.
public struct IPNetwork: Sendable, Equatable, CustomStringConvertible {
  public let address: [UInt8]
  public let prefixLength: Int

  /// Parses "10.0.0.0/8", "::1/128" or a bare address (a host network).
  public init?(_ text: String) {
    let parts = text.split(separator: "/", omittingEmptySubsequences: false)
    guard parts.count <= 2, let bytes = IPNetwork.parseAddress(String(parts[0])) else { return nil }
    let maxBits = bytes.count * 8
    if parts.count == 2 {
      guard let bits = Int(parts[1]), (0...maxBits).contains(bits) else { return nil }
      prefixLength = bits
    } else {
      prefixLength = maxBits
    }
    address = bytes
  }

  /// The 4 or 16 bytes of a numeric IP address; nil for anything else.
  public static func parseAddress(_ text: String) -> [UInt8]? {
    var v4 = in_addr()
    if inet_pton(AF_INET, text, &v4) == 1 { return withUnsafeBytes(of: &v4) { Array($0) } }
    var v6 = in6_addr()
    if inet_pton(AF_INET6, text, &v6) == 1 { return withUnsafeBytes(of: &v6) { Array($0) } }
    return nil
  }

  /// Whether the address (4 or 16 bytes) is inside the network. An IPv4-mapped IPv6
  /// address (::ffff:a.b.c.d, how a dual-stack socket shows an IPv4 peer) is matched as
  /// the IPv4 address it carries.
  public func contains(_ bytes: [UInt8]) -> Bool {
    let bytes = address.count == 4 ? (IPNetwork.mappedIPv4(bytes) ?? bytes) : bytes
    guard bytes.count == address.count else { return false }
    var remaining = prefixLength
    for i in 0..<bytes.count where remaining > 0 {
      let bits = min(8, remaining)
      let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - bits))
      if bytes[i] & mask != address[i] & mask { return false }
      remaining -= bits
    }
    return true
  }

  /// The IPv4 address inside an IPv4-mapped IPv6 address (::ffff:a.b.c.d); nil for
  /// anything else.
  public static func mappedIPv4(_ bytes: [UInt8]) -> [UInt8]? {
    guard bytes.count == 16, bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF
    else { return nil }
    return Array(bytes[12..<16])
  }

  public var description: String {
    let host = address.count == 4 ? address.map(String.init).joined(separator: ".") : "ipv6"
    return "\(host)/\(prefixLength)"
  }
}

/// The key the sign-up quota counts an end user under: the IPv4 address, or the IPv6
/// /64 (one subscriber usually holds a whole /64, so counting single v6 addresses would
/// be no limit at all).
public enum IPKey {
  public static func make(_ ip: String) -> String? {
    guard let bytes = IPNetwork.parseAddress(ip) else { return nil }
    if bytes.count == 4 { return bytes.map(String.init).joined(separator: ".") }
    // IPv4-mapped IPv6 (::ffff:a.b.c.d) counts as the IPv4 address.
    if let v4 = IPNetwork.mappedIPv4(bytes) { return v4.map(String.init).joined(separator: ".") }
    let groups = stride(from: 0, to: 8, by: 2).map {
      String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16)
    }
    return groups.joined(separator: ":") + "::/64"
  }
}
