import AnonAuthService
import AnonAuthStore
import Testing

@testable import AnonAuthServer

/// The one renderer behind every histogram on `/metrics`: labelled series keep their
/// labels on `_sum` and `_count`, the `+Inf` bucket equals the count.
@Suite struct PrometheusHistogramTests {
  private func snapshot() -> HistogramSnapshot {
    var h = HistogramSnapshot(bounds: [0.001, 0.5])
    h.cumulativeCounts = [2, 5]
    h.count = 7
    h.sum = 3.25
    return h
  }

  @Test func aSeriesWithLabelsCarriesThemOnEveryLine() {
    let text = PrometheusHistogram.series("x_seconds", labels: "loop=\"io-0\"", snapshot())
    #expect(
      text == """
        x_seconds_bucket{loop="io-0",le="0.001"} 2
        x_seconds_bucket{loop="io-0",le="0.5"} 5
        x_seconds_bucket{loop="io-0",le="+Inf"} 7
        x_seconds_sum{loop="io-0"} 3.25
        x_seconds_count{loop="io-0"} 7

        """)
  }

  @Test func aHistogramWithoutLabelsHasItsHeaderOnce() {
    let text = PrometheusHistogram.render(MetricFamilies.storeBatchSize, snapshot())
    #expect(
      text == """
        # HELP anonauth_store_batch_size Write jobs per committed transaction.
        # TYPE anonauth_store_batch_size histogram
        anonauth_store_batch_size_bucket{le="0.001"} 2
        anonauth_store_batch_size_bucket{le="0.5"} 5
        anonauth_store_batch_size_bucket{le="+Inf"} 7
        anonauth_store_batch_size_sum 3.25
        anonauth_store_batch_size_count 7

        """)
  }

  @Test func rpcLatencyAndLoopTurnsRenderThroughIt() {
    let metrics = ServerMetrics()
    metrics.recordCall(method: "/a.B/C", code: .ok, nanos: 2_000_000)
    let text = metrics.prometheusText()
    #expect(text.contains("anonauth_rpc_duration_seconds_bucket{method=\"/a.B/C\",le=\"0.001\"} 0\n"))
    #expect(text.contains("anonauth_rpc_duration_seconds_bucket{method=\"/a.B/C\",le=\"0.0025\"} 1\n"))
    #expect(text.contains("anonauth_rpc_duration_seconds_count{method=\"/a.B/C\"} 1\n"))
    #expect(text.components(separatedBy: "# TYPE anonauth_rpc_duration_seconds histogram").count == 2)
  }
}
