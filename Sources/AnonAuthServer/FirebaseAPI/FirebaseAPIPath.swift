/// A request path as the Firebase API matches it: split into segments after dropping
/// the host-named prefix that SDKs in emulator mode put first
/// (`/identitytoolkit.googleapis.com/v1/...`, `/securetoken.googleapis.com/v1/token`), so
/// both layouts reach the same endpoint.
public struct FirebaseAPIPath: Sendable, Equatable {
  public let segments: [Substring]

  /// The host names an emulator-mode path may start with.
  static let hostPrefixes: Set<Substring> = ["identitytoolkit.googleapis.com", "securetoken.googleapis.com"]

  public init(_ path: String) {
    var segments = ASCIIText.split(path[...], "/", omittingEmpty: false).dropFirst()
    if let first = segments.first, Self.hostPrefixes.contains(first) { segments = segments.dropFirst() }
    self.segments = Array(segments)
  }

  /// A path with `{name}` segments that match any one non-empty segment, e.g.
  /// "/v1/projects/{project}/accounts:lookup".
  public struct Pattern: Sendable {
    enum Segment: Sendable, Equatable {
      case literal(String)
      case capture(String)
    }
    let segments: [Segment]

    public init(_ path: String) {
      segments = path.split(separator: "/").map { part in
        if part.hasPrefix("{"), part.hasSuffix("}") { return .capture(String(part.dropFirst().dropLast())) }
        return .literal(String(part))
      }
    }

    /// A path this pattern matches, each capture filled with its own name (for the fuzz
    /// target and tests).
    public var samplePath: String {
      "/"
        + segments.map { segment in
          switch segment {
          case .literal(let literal): literal
          case .capture(let name): name
          }
        }.joined(separator: "/")
    }

    /// The captured segments (still percent-encoded) when `path` matches, else nil.
    public func match(_ path: [Substring]) -> [String: String]? {
      guard path.count == segments.count else { return nil }
      var captures: [String: String] = [:]
      for (segment, part) in zip(segments, path) {
        switch segment {
        case .literal(let literal): guard part == literal else { return nil }
        case .capture(let name):
          guard !part.isEmpty else { return nil }
          captures[name] = String(part)
        }
      }
      return captures
    }
  }
}
