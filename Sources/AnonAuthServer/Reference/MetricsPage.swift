import AnonAuthService

/// docs/metrics.md, written from `MetricFamilies`, the registry `/metrics` writes from.
enum MetricsPage {
  static func render() -> String {
    var out = ReferencePages.banner(
      source: "Sources/AnonAuthService/Support/Metrics/MetricFamilies.swift", command: "metrics")
    out += """
      # Metrics

      The ops port (`--ops-listen`, plain HTTP) serves `/metrics` in the Prometheus text
      format 0.0.4. Every family below is declared once in the registry this page is
      generated from. Names, types and labels are stable: families are added, never
      renamed or relabelled. A histogram has the series `<name>_bucket` (with `le`),
      `<name>_sum` and `<name>_count`. A labelled family has no sample until its first
      event (a method's first call, a provider's first sign-up).

      """
    for component in MetricComponent.allCases {
      out += "\n## \(component.rawValue)\n\n| metric | type | labels | help |\n| --- | --- | --- | --- |\n"
      for family in MetricFamilies.all where family.component == component {
        let labels = family.labels.map { label in
          let values = family.labelValues[label].map {
            " (" + $0.map { "`\($0)`" }.joined(separator: ", ") + ")"
          }
          return "`\(label)`" + (values ?? "")
        }.joined(separator: ", ")
        out +=
          "| `\(family.name)` | \(family.kind.rawValue) | \(labels) | \(ReasonsPage.cell(family.help)) |\n"
      }
    }
    return out
  }
}
