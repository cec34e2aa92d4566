import AnonAuthStore

/// Prometheus histograms in text format 0.0.4, from snapshots with cumulative buckets:
/// the store's, the RPC latencies and the event-loop turns are all written by this one
/// renderer, so their series look alike to a scraper.
enum PrometheusHistogram {
  /// A histogram with one series and no labels.
  static func render(_ name: String, help: String, _ h: HistogramSnapshot) -> String {
    header(name, help: help) + series(name, h)
  }

  /// The `# HELP` and `# TYPE` lines, written once before a histogram's series.
  static func header(_ name: String, help: String) -> String {
    "# HELP \(name) \(help)\n# TYPE \(name) histogram\n"
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
