/// The service layer's view of outbound HTTPS: it knows what it fetches (provider keys,
/// Facebook's Graph API), not how. The daemon plugs in the TLS client of `AnonAuthNet`;
/// tests plug in fakes.
public protocol OutboundHTTP: Sendable {
  /// GETs an https URL.
  /// - Throws: any error when no response came (it becomes `INVALID_IDP_RESPONSE`; its
  ///   description must not contain the URL's query, which can hold tokens).
  func get(_ url: String) async throws -> OutboundResponse

  /// POSTs `form` (`application/x-www-form-urlencoded`) to an https URL: Apple's token
  /// and revoke endpoints.
  /// - Throws: as `get`; the description must not contain the form, which holds secrets.
  func post(_ url: String, form: [(String, String)]) async throws -> OutboundResponse
}

extension OutboundHTTP {
  /// Clients that only fetch (tests' fakes) answer every POST with a failure.
  public func post(_ url: String, form: [(String, String)]) async throws -> OutboundResponse {
    throw NoOutboundHTTP.Unavailable()
  }
}

/// `application/x-www-form-urlencoded`: each name and value percent-encoded but for
/// RFC 3986's unreserved characters.
public enum FormBody {
  public static func encode(_ fields: [(String, String)]) -> [UInt8] {
    var out: [UInt8] = []
    for (index, (name, value)) in fields.enumerated() {
      if index > 0 { out.append(UInt8(ascii: "&")) }
      append(name, to: &out)
      out.append(UInt8(ascii: "="))
      append(value, to: &out)
    }
    return out
  }

  private static func append(_ text: String, to out: inout [UInt8]) {
    let hex = Array("0123456789ABCDEF".utf8)
    for byte in text.utf8 {
      switch byte {
      case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
        UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
        UInt8(ascii: "~"):
        out.append(byte)
      default:
        out += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
      }
    }
  }
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
