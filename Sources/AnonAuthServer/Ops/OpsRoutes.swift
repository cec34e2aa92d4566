import AnonAuthService
import AnonAuthStore

/// The ops port's pages.
public enum OpsRoutes {
  public static func make(
    state: ServingState, metrics: ServerMetrics, serviceMetrics: ServiceMetrics, store: Store,
    minter: TokenMinter, leaderReachable: @escaping @Sendable () -> Bool = { true }
  ) -> [String: OpsServer.Route] {
    let cacheControl = ("Cache-Control", "public, max-age=\(TokenMinter.publicKeysMaxAgeSeconds)")
    return [
      "/healthz": { HTTPResponse(status: 200, body: "ok\n") },
      "/readyz": {
        switch state.current {
        case .starting: return HTTPResponse(status: 503, body: "starting\n")
        case .draining: return HTTPResponse(status: 503, body: "draining\n")
        case .serving:
          guard minter.hasKeys else { return HTTPResponse(status: 503, body: "no signing keys\n") }
          // A replicated store with no leader in reach can neither read nor write.
          guard leaderReachable() else {
            return HTTPResponse(status: 503, body: "no cluster leader reachable\n")
          }
          guard store.isWritable else {
            // Ready again once a probe write succeeds (space freed): see probeWritability.
            Task { await store.probeWritability() }
            return HTTPResponse(status: 503, body: "store not writable\n")
          }
          return HTTPResponse(status: 200, body: "ready\n")
        }
      },
      "/metrics": {
        HTTPResponse(
          status: 200, contentType: "text/plain; version=0.0.4; charset=utf-8",
          body: MetricsText.render(server: metrics, service: serviceMetrics, store: store.metrics))
      },
      "/.well-known/jwks.json": {
        HTTPResponse(
          status: 200, contentType: "application/json", headers: [cacheControl],
          body: minter.publicKeys().jwks)
      },
      "/x509": {
        HTTPResponse(
          status: 200, contentType: "application/json", headers: [cacheControl],
          body: X509JSON.render(minter.publicKeys().certificates))
      },
    ]
  }
}

/// `{"kid": "PEM", ...}`, as Firebase publishes its certificates.
enum X509JSON {
  static func render(_ certificates: [String: String]) -> String {
    let body = certificates.keys.sorted().map { kid in
      "\(JSONText.quote(kid)):\(JSONText.quote(certificates[kid] ?? ""))"
    }
    return "{" + body.joined(separator: ",") + "}"
  }
}
