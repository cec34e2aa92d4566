/// The service layer's view of outbound HTTPS: it knows what it fetches (provider keys,
/// Facebook's Graph API), not how. The daemon plugs in the TLS client of `AnonAuthNet`;
/// tests plug in fakes.
public protocol OutboundHTTP: Sendable {
  /// GETs an https URL.
  /// - Throws: any error when no response came (it becomes `INVALID_IDP_RESPONSE`; its
  ///   description must not contain the URL's query, which can hold tokens).
  func get(_ url: String) async throws -> OutboundResponse
}

/// A response from `OutboundHTTP`.
public struct OutboundResponse: Sendable {
  public var status: Int
  public var body: [UInt8]
  /// `Cache-Control: max-age` less `Age`, 0 for no-store/no-cache, nil when unsaid.
  public var freshnessSeconds: Int?

  /// A response as an `OutboundHTTP` implementation read it.
  public init(status: Int, body: [UInt8], freshnessSeconds: Int? = nil) {
    self.status = status
    self.body = body
    self.freshnessSeconds = freshnessSeconds
  }
}

/// The outbound client of an environment built without one: every call fails, so
/// providers that need the network answer `INVALID_IDP_RESPONSE`.
public struct NoOutboundHTTP: OutboundHTTP {
  /// The stand-in of environments without a network.
  public init() {}

  struct Unavailable: Error, CustomStringConvertible {
    var description: String { "no outbound HTTPS client is configured" }
  }

  /// Always fails.
  public func get(_ url: String) async throws -> OutboundResponse { throw Unavailable() }
}
