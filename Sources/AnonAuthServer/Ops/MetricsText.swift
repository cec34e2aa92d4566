import AnonAuthService
import AnonAuthStore

/// The body of `/metrics`: every component's families, in the order of
/// `MetricFamilies.all`. One function, so the endpoint and the registry's tests render
/// the same text.
enum MetricsText {
  static func render(server: ServerMetrics, service: ServiceMetrics, store: StoreMetrics) -> String {
    server.prometheusText() + service.prometheusText() + StoreMetricsText.render(store)
  }
}
