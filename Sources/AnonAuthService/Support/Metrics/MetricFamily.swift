/// One metric family of `/metrics`, declared once in `MetricFamilies` with its name,
/// type, help and labels. The exposition code writes its `# HELP`/`# TYPE` header and its
/// sample lines from the declaration, and docs/metrics.md is generated from the same
/// declarations, so a name or a help text cannot differ between the two.
public struct MetricFamily: Sendable, Hashable {
  /// The Prometheus type, as the `# TYPE` line spells it.
  public enum Kind: String, Sendable {
    case counter, gauge, histogram
  }

  public let name: String
  public let kind: Kind
  public let help: String
  /// The label names of every sample, in the order the samples write them.
  public let labels: [String]
  public let component: MetricComponent
  /// For a label whose values are a closed set, every value it takes (the page lists
  /// them, and the registry's tests hold the samples to them).
  public let labelValues: [String: [String]]

  init(
    _ name: String, _ kind: Kind, _ component: MetricComponent, labels: [String] = [],
    values: [String: [String]] = [:], help: String
  ) {
    self.name = name
    self.kind = kind
    self.component = component
    self.labels = labels
    self.labelValues = values
    self.help = help
  }

  /// The `# HELP` and `# TYPE` lines, written once before the family's samples.
  public var header: String { "# HELP \(name) \(help)\n# TYPE \(name) \(kind.rawValue)\n" }

  /// `key="value"` pairs for `values`, in the order of `labels`, joined by commas.
  public func labelSet(_ values: [String]) -> String {
    zip(labels, values).map { "\($0)=\"\($1)\"" }.joined(separator: ",")
  }

  /// One sample line of a counter or a gauge; `values` are the label values in the order
  /// of `labels`.
  public func sample(_ value: some CustomStringConvertible, _ values: String...) -> String {
    let set = labelSet(values)
    return set.isEmpty ? "\(name) \(value)\n" : "\(name){\(set)} \(value)\n"
  }

  /// The header and the one unlabelled sample of a counter or a gauge.
  public func single(_ value: some CustomStringConvertible) -> String {
    header + sample(value)
  }
}

/// The part of the daemon a metric family describes: the sections of docs/metrics.md.
public enum MetricComponent: String, Sendable, CaseIterable {
  case rpc = "RPC server"
  case eventLoops = "Event loops"
  case process = "Process"
  case accounts = "Accounts, sign-ins and admission"
  case store = "Store"
}
