/// An HTTP response as the outbound client read it: status, headers (names lowercased,
/// repeated headers joined with ", "), and the whole body (bounded).
public struct HTTPResponse: Sendable, Equatable {
  public var status: Int
  public var headers: [String: String]
  public var body: [UInt8]

  /// A response; `headers` names must be lowercase.
  public init(status: Int, headers: [String: String], body: [UInt8]) {
    self.status = status
    self.headers = headers
    self.body = body
  }

  /// How many seconds the response may be reused: `Cache-Control: max-age` less `Age`;
  /// 0 for `no-store` or `no-cache`; nil when the response says nothing.
  public var freshnessSeconds: Int? {
    guard let control = headers["cache-control"] else { return nil }
    var maxAge: Int?
    for directive in control.split(separator: ",") {
      let parts = directive.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
      guard let first = parts.first else { continue }
      let name = first.trimmingSpaces().lowercased()
      if name == "no-store" || name == "no-cache" { return 0 }
      if name == "max-age", parts.count == 2 {
        var value = parts[1].trimmingSpaces()
        if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 {
          value = value.dropFirst().dropLast()
        }
        guard !value.isEmpty, value.allSatisfy({ $0.isASCII && $0.isNumber }) else { return 0 }
        // Values past 2^31 are treated as 2^31, as RFC 9111 says.
        maxAge = Int(value.prefix(10)).map { min($0, Int(Int32.max)) } ?? Int(Int32.max)
      }
    }
    guard let maxAge else { return nil }
    let age = headers["age"].flatMap { Int($0.trimmingSpaces()) } ?? 0
    return max(0, maxAge - max(0, age))
  }
}

extension Substring {
  func trimmingSpaces() -> Substring {
    var s = self
    while let first = s.first, first == " " || first == "\t" { s = s.dropFirst() }
    while let last = s.last, last == " " || last == "\t" { s = s.dropLast() }
    return s
  }
}

extension String {
  func trimmingSpaces() -> Substring { Substring(self).trimmingSpaces() }
}
