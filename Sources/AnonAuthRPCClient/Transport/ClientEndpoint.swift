import AnonAuthWire

/// Where and how a client reaches AnonAuth.
public struct ClientEndpoint: Sendable, Hashable {
  /// A numeric IP or "localhost".
  public var host: String
  public var port: UInt16
  /// PEM file of the CA (or the self-signed `--dev` certificate) to trust; nil uses the
  /// system's CA store.
  public var caFile: String?
  /// Development only: skips certificate verification, so anyone on the path can read
  /// and change the traffic.
  public var insecure: Bool
  /// The name the certificate must carry; defaults to `host`.
  public var serverName: String?
  public var maxFrameSize: Int

  public init(
    host: String, port: UInt16, caFile: String? = nil, insecure: Bool = false, serverName: String? = nil,
    maxFrameSize: Int = ProtocolDefaults.maxFrameSize
  ) {
    self.host = host
    self.port = port
    self.caFile = caFile
    self.insecure = insecure
    self.serverName = serverName
    self.maxFrameSize = maxFrameSize
  }

  /// Parses "HOST:PORT" (IPv6 in brackets).
  public init(address: String, caFile: String? = nil, insecure: Bool = false) throws(RPCClientError) {
    let text = address
    guard let colon = text.lastIndex(of: ":"), let port = UInt16(text[text.index(after: colon)...]) else {
      throw RPCClientError.badAddress(address)
    }
    var host = String(text[..<colon])
    if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
    self.init(host: host, port: port, caFile: caFile, insecure: insecure)
  }
}

/// Client set-up failures that happen before any call is made.
public enum RPCClientError: Error, CustomStringConvertible, Sendable {
  case badAddress(String)
  case tls(String)

  public var description: String {
    switch self {
    case .badAddress(let a): "bad address \"\(a)\": expected HOST:PORT"
    case .tls(let why): "TLS set-up: \(why)"
    }
  }
}
