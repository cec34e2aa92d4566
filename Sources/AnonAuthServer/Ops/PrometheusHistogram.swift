import AnonAuthService
import AnonAuthStore

/// Prometheus histograms in text format 0.0.4, from snapshots with cumulative buckets:
/// the store's, the RPC latencies and the event-loop turns are all written by this one
/// renderer, so their series look alike to a scraper.
enum PrometheusHistogram {
  /// A histogram family with one series and no labels.
  static func render(_ family: MetricFamily, _ h: HistogramSnapshot) -> String {
    family.header + series(family.name, h)
  }

  /// One series of `family`; `values` are its label values in the order of its labels.
  static func series(_ family: MetricFamily, _ values: [String], _ h: HistogramSnapshot) -> String {
    series(family.name, labels: family.labelSet(values), h)
  }

  /// One series: `labels` is `key="value"` pairs joined by commas, or empty.
  static func series(_ name: String, labels: String = "", _ h: HistogramSnapshot) -> String {
    let bucketLabels = labels.isEmpty ? "" : labels + ","
    let ownLabels = labels.isEmpty ? "" : "{\(labels)}"
    var out = ""
    for (bound, count) in zip(h.bounds, h.cumulativeCounts) {
      out += "\(name)_bucket{\(bucketLabels)le=\"\(bound)\"} \(count)\n"
    }
    out += "\(name)_bucket{\(bucketLabels)le=\"+Inf\"} \(h.count)\n"
    out += "\(name)_sum\(ownLabels) \(h.sum)\n"
    out += "\(name)_count\(ownLabels) \(h.count)\n"
    return out
  }
}
