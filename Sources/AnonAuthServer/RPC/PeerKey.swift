import AnonAuthService

/// The per-IP counter a peer goes to, for every per-IP limit of the transport (open
/// connections, their pace, buffered bytes): counted as the sign-up quota counts an end
/// user, an IPv6 /64 is one peer (one subscriber holds a whole /64) and an IPv4-mapped
/// address is its IPv4 address. Peers in `exempt` (the `--trusted-proxies`, behind which
/// many clients share one address) and peers without an address have none.
struct PeerKey: Sendable {
  let exempt: [IPNetwork]

  func key(_ peerIP: String?) -> String? {
    guard let peerIP else { return nil }
    if !exempt.isEmpty, let bytes = IPNetwork.parseAddress(peerIP),
      exempt.contains(where: { $0.contains(bytes) })
    {
      return nil
    }
    return IPKey.make(peerIP) ?? peerIP
  }
}
