import AnonAuthService

/// The ops port's pages.
public enum OpsRoutes {
  public static func make(state: ServingState, metrics: ServerMetrics) -> [String: OpsServer.Route] {
    [
      "/healthz": { HTTPResponse(status: 200, body: "ok\n") },
      "/readyz": {
        switch state.current {
        case .serving: HTTPResponse(status: 200, body: "ready\n")
        case .starting: HTTPResponse(status: 503, body: "starting\n")
        case .draining: HTTPResponse(status: 503, body: "draining\n")
        }
      },
      "/metrics": {
        HTTPResponse(
          status: 200, contentType: "text/plain; version=0.0.4; charset=utf-8", body: metrics.prometheusText()
        )
      },
    ]
  }
}
