import Foundation
import Testing

@testable import AnonAuthNet
@testable import AnonAuthServer
@testable import AnonAuthService
@testable import AnonAuthStore

/// Every family `/metrics` writes is declared in `MetricFamilies` (so docs/metrics.md,
/// generated from it, lists it), with the same type and labels, and nothing writes a
/// `# HELP` or `# TYPE` line of its own.
@Suite struct MetricsRegistryTests {
  static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

  /// The body of `/metrics` with every family holding at least one sample.
  static func fullText() -> String {
    let server = ServerMetrics()
    server.recordCall(method: "/anonauth.v1.AuthService/SignUp", code: .ok, nanos: 1_000_000)
    server.watch(budget: ReceiveBudget(maxBytes: 1 << 20, maxBytesPerIP: 1 << 16, exempt: []))
    server.watch(loops: [LoopTurnStats(loopName: "io-0")])
    let service = ServiceMetrics()
    service.signedUp(provider: "anonymous")
    service.linked(provider: "password")
    let store = StoreMetrics(
      transactions: 1, writesCommitted: 1, writesFailed: 0, lastBatchSize: 1, commitNanoseconds: 1)
    return MetricsText.render(server: server, service: service, store: store)
  }

  /// `# TYPE` lines of `text`: family name to type.
  static func types(_ text: String) -> [(String, String)] {
    text.split(separator: "\n").compactMap { line in
      let parts = line.split(separator: " ")
      guard parts.count == 4, parts[0] == "#", parts[1] == "TYPE" else { return nil }
      return (String(parts[2]), String(parts[3]))
    }
  }

  @Test func everyFamilyWrittenIsDeclaredWithItsType() {
    let declared = Dictionary(uniqueKeysWithValues: MetricFamilies.all.map { ($0.name, $0.kind.rawValue) })
    let written = Self.types(Self.fullText())
    #expect(written.count == MetricFamilies.all.count)
    for (name, type) in written {
      #expect(
        declared[name] == type,
        "\(name) is written as a \(type) but declared as \(declared[name] ?? "nothing")")
    }
    #expect(written.map(\.0) == MetricFamilies.all.map(\.name), "the registry's order is the endpoint's")
  }

  /// Each sample's labels are its family's, in the declared order (`le` aside), and a
  /// label with declared values takes only those.
  @Test func everySampleCarriesItsFamilysLabels() throws {
    let byName = Dictionary(uniqueKeysWithValues: MetricFamilies.all.map { ($0.name, $0) })
    let labelPair = try Regex("([a-z_]+)=\"([^\"]*)\"")
    for line in Self.fullText().split(separator: "\n") where !line.hasPrefix("#") {
      let series = String(line.prefix { $0 != "{" && $0 != " " })
      let family =
        byName[series]
        ?? ["_bucket", "_sum", "_count"].lazy.compactMap { suffix in
          series.hasSuffix(suffix) ? byName[String(series.dropLast(suffix.count))] : nil
        }.first
      guard let family else {
        Issue.record("\(series) belongs to no declared family")
        continue
      }
      let pairs = line.matches(of: labelPair).compactMap { match -> (String, String)? in
        guard let name = match.output[1].substring, let value = match.output[2].substring else { return nil }
        return (String(name), String(value))
      }.filter { $0.0 != "le" }
      #expect(pairs.map(\.0) == family.labels, "\(line)")
      for (name, value) in pairs {
        guard let closed = family.labelValues[name] else { continue }
        #expect(closed.contains(value), "\(line): \(name)=\(value) is not a declared value")
      }
    }
  }

  @Test func familyNamesAreUniqueAndWellFormed() throws {
    let names = MetricFamilies.all.map(\.name)
    #expect(Set(names).count == names.count)
    let valid = try Regex("^[a-z_][a-z0-9_]*$")
    for family in MetricFamilies.all {
      #expect(family.name.wholeMatch(of: valid) != nil, "\(family.name)")
      #expect(family.kind != .counter || family.name.hasSuffix("_total"), "\(family.name)")
      #expect(!family.help.isEmpty && !family.help.contains("\n"), "\(family.name)")
    }
  }

  /// Header lines come only from `MetricFamily`: a family written by hand would be
  /// missing from the registry and the page.
  @Test func noSourceWritesItsOwnHeader() throws {
    var offenders: [String] = []
    for module in ["AnonAuthService", "AnonAuthServer", "AnonAuthStore", "AnonAuthNet"] {
      let base = Self.root.appendingPathComponent("Sources/\(module)")
      guard let walker = FileManager.default.enumerator(atPath: base.path) else { continue }
      for case let path as String in walker
      where path.hasSuffix(".swift") && !path.hasSuffix("/MetricFamily.swift") {
        let text = try String(contentsOf: base.appendingPathComponent(path), encoding: .utf8)
        if text.contains("# HELP") || text.contains("# TYPE") { offenders.append("\(module)/\(path)") }
      }
    }
    #expect(offenders.isEmpty, "\(offenders)")
  }
}
