import Testing

@testable import AnonAuthServer

/// The endpoint index finds what a scan of every endpoint finds, in the same order, while
/// trying only the patterns that can match: a request's route costs a few patterns, not
/// all of them.
@Suite struct FirebaseAPIEndpointIndexTests {
  static let index = FirebaseAPI.EndpointIndex(FirebaseAPI.allEndpoints)

  /// Every endpoint's own path (in both layouts) and paths that are near misses.
  static var paths: [String] {
    let samples = FirebaseAPI.allEndpoints.map(\.pattern.samplePath)
    return samples + samples.map { "/identitytoolkit.googleapis.com" + $0 } + samples.map { $0 + "/extra" }
      + samples.map { String($0.dropLast()) }
      + [
        "/", "", "/v1", "/v1/", "/v1/accounts:nope", "/v1/projects//accounts",
        "/v1/projects/p/accounts:lookup",
        "/v1/projects/p/accounts:lookup/", "//v1/token", "/v1/token", "/securetoken.googleapis.com/v1/token",
      ]
  }

  static func scan(_ path: [Substring]) -> [(String, String, [String: String])] {
    FirebaseAPI.allEndpoints.compactMap { endpoint in
      endpoint.pattern.match(path).map { (endpoint.name, endpoint.httpMethod, $0) }
    }
  }

  @Test("The index matches what a scan of every endpoint matches, in order, with the same captures")
  func sameMatches() {
    for path in Self.paths {
      let segments = FirebaseAPIPath(path).segments
      let indexed = Self.index.matches(segments).map {
        ($0.endpoint.name, $0.endpoint.httpMethod, $0.parameters)
      }
      let scanned = Self.scan(segments)
      #expect(indexed.count == scanned.count, "\(path)")
      for (a, b) in zip(indexed, scanned) {
        #expect(a.0 == b.0 && a.1 == b.1 && a.2 == b.2, "\(path)")
      }
    }
  }

  @Test("Every endpoint's path tries at most four patterns, of the 30 and more there are")
  func fewCandidates() {
    #expect(FirebaseAPI.allEndpoints.count >= 30)
    var most = 0
    for endpoint in FirebaseAPI.allEndpoints {
      let segments = FirebaseAPIPath(endpoint.pattern.samplePath).segments
      let tried = Self.index.candidates(segments)
      #expect(tried == tried.sorted())
      most = max(most, tried.count)
    }
    #expect(most <= 4)
    #expect(Self.index.candidates(FirebaseAPIPath("/v1/accounts:signUp").segments).count == 1)
  }
}
