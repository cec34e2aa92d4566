import AnonAuthWire

/// The rule for `ProjectConfig.cors_origins`: each entry is an origin as a browser sends
/// it in `Origin` (`https://app.example.com`, `http://localhost:5173`): a scheme, a host
/// and an optional port, nothing else, compared exactly.
public enum CORSOrigin {
  public static let maximumCount = 100

  static func validate(_ origins: [String]) throws(RPCError) {
    guard origins.count <= maximumCount else {
      throw RPCError(.invalidConfig, "cors_origins: at most \(maximumCount) origins")
    }
    for origin in origins where !isOrigin(origin) {
      throw RPCError(
        .invalidConfig, "cors_origins: each must be scheme://host[:port] (https or http), without a path")
    }
  }

  /// Whether `text` is one serialised origin.
  public static func isOrigin(_ text: String) -> Bool {
    guard text.utf8.count <= 256 else { return false }
    let rest: Substring
    if text.hasPrefix("https://") {
      rest = text.dropFirst(8)
    } else if text.hasPrefix("http://") {
      rest = text.dropFirst(7)
    } else {
      return false
    }
    return !rest.isEmpty
      && rest.unicodeScalars.allSatisfy {
        $0.isASCII
          && (("a"..."z").contains($0) || ("0"..."9").contains($0) || "-.:[]".unicodeScalars.contains($0))
      }
  }
}
