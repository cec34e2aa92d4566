import AnonAuthService
import AnonAuthStore

/// The ops port's pages.
public enum OpsRoutes {
  public static func make(
    state: ServingState, metrics: ServerMetrics, serviceMetrics: ServiceMetrics, store: Store,
    minter: TokenMinter
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
          guard store.isWritable else { return HTTPResponse(status: 503, body: "store not writable\n") }
          return HTTPResponse(status: 200, body: "ready\n")
        }
      },
      "/metrics": {
        HTTPResponse(
          status: 200, contentType: "text/plain; version=0.0.4; charset=utf-8",
          body: metrics.prometheusText() + serviceMetrics.prometheusText()
            + StoreMetricsText.render(store.metrics))
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

/// The store's group-commit counters in Prometheus text.
enum StoreMetricsText {
  static func render(_ m: StoreMetrics) -> String {
    """
    # HELP anonauth_store_transactions_total Write transactions committed.
    # TYPE anonauth_store_transactions_total counter
    anonauth_store_transactions_total \(m.transactions)
    # HELP anonauth_store_writes_total Write jobs committed.
    # TYPE anonauth_store_writes_total counter
    anonauth_store_writes_total \(m.writesCommitted)
    # HELP anonauth_store_write_failures_total Write jobs that failed.
    # TYPE anonauth_store_write_failures_total counter
    anonauth_store_write_failures_total \(m.writesFailed)
    # HELP anonauth_store_batch_size_average Write jobs per transaction, on average.
    # TYPE anonauth_store_batch_size_average gauge
    anonauth_store_batch_size_average \(m.averageBatchSize)
    # HELP anonauth_store_commit_seconds_total Time spent committing.
    # TYPE anonauth_store_commit_seconds_total counter
    anonauth_store_commit_seconds_total \(Double(m.commitNanoseconds) / 1e9)

    """
  }
}
