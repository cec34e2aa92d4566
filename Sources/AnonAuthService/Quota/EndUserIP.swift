import Foundation

/// Decides which IP address a sign-up counts against (docs/protocol.md §3): the
/// `x-end-user-ip` metadata from a trusted caller (one that also presents a valid admin
/// key, or whose peer address is inside `--trusted-proxies`), otherwise the socket peer.
public struct EndUserIPPolicy: Sendable {
  public let trustedProxies: [IPNetwork]

  public init(trustedProxies: [IPNetwork]) {
    self.trustedProxies = trustedProxies
  }

  /// Parses `--trusted-proxies`; nil names the entry that is not a CIDR.
  public static func parse(_ entries: [String]) -> Result<EndUserIPPolicy, ParseError> {
    var networks: [IPNetwork] = []
    for entry in entries {
      guard let network = IPNetwork(entry) else { return .failure(ParseError(entry: entry)) }
      networks.append(network)
    }
    return .success(EndUserIPPolicy(trustedProxies: networks))
  }

  public struct ParseError: Error, Sendable {
    public let entry: String
  }

  public func peerIsTrusted(_ peerIP: String?) -> Bool {
    guard let peerIP, let bytes = IPNetwork.parseAddress(peerIP) else { return false }
    return trustedProxies.contains { $0.contains(bytes) }
  }

  /// The end user's address for quota purposes. A service caller with a verified client
  /// certificate (mutual TLS) is trusted too.
  public func endUserIP(_ context: CallContext, callerIsAdmin: Bool) -> String? {
    if callerIsAdmin || context.clientCertificateName != nil || peerIsTrusted(context.peerIP),
      let claimed = context.metadata["x-end-user-ip"]?.trimmingCharacters(in: .whitespaces),
      IPNetwork.parseAddress(claimed) != nil
    {
      return claimed
    }
    return context.peerIP
  }
}
