extension FirebaseAPI {
  /// The endpoints grouped by the paths they can match, built once, so that a request
  /// tries only the patterns that can match it. A pattern can match only a path with its
  /// number of segments, and one that ends in a literal segment only a path ending in
  /// that segment. Trying every pattern copied each endpoint on the way (four references
  /// retained and released): 145 of the 910 retains of an HTTPS sign-up
  /// (docs/benchmarks.md, "Where the time goes per call").
  struct EndpointIndex: Sendable {
    private struct Key: Hashable, Sendable {
      let count: Int
      /// The pattern's last segment when it is a literal; nil when it is a capture.
      let last: Substring?
    }

    let endpoints: [Endpoint]
    /// Positions in `endpoints`, ascending, by the shape of the paths they can match.
    private let positions: [Key: [Int]]

    init(_ endpoints: [Endpoint]) {
      self.endpoints = endpoints
      var positions: [Key: [Int]] = [:]
      for (position, endpoint) in endpoints.enumerated() {
        let segments = endpoint.pattern.segments
        var last: Substring?
        if case .literal(let literal)? = segments.last { last = literal[...] }
        positions[Key(count: segments.count, last: last), default: []].append(position)
      }
      self.positions = positions
    }

    /// Positions in `endpoints` of the patterns that may match `path`, in the endpoints'
    /// order: every pattern that matches is among them.
    func candidates(_ path: [Substring]) -> [Int] {
      let captures = positions[Key(count: path.count, last: nil)] ?? []
      guard let last = path.last, let literals = positions[Key(count: path.count, last: last)] else {
        return captures
      }
      if captures.isEmpty { return literals }
      return (literals + captures).sorted()
    }

    /// The endpoints whose pattern matches `path`, in their order, each with its captures
    /// (what a scan of every endpoint finds).
    func matches(_ path: [Substring]) -> [(endpoint: Endpoint, parameters: [String: String])] {
      var found: [(endpoint: Endpoint, parameters: [String: String])] = []
      for position in candidates(path) {
        if let parameters = endpoints[position].pattern.match(path) {
          found.append((endpoints[position], parameters))
        }
      }
      return found
    }
  }
}
