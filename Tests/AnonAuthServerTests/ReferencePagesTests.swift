import AnonAuthService
import AnonAuthWire
import Foundation
import Testing

@testable import AnonAuthServer

/// The committed reference pages are what the code generates now: a reason or a metric
/// family added without `make reference-docs` fails here (and `make check-reference-docs`).
@Suite struct ReferencePagesTests {
  static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

  @Test(arguments: ReferencePages.pages.map(\.name))
  func committedPageIsCurrent(name: String) throws {
    let path = try #require(ReferencePages.pages.first { $0.name == name }?.path)
    let committed = try String(contentsOf: Self.root.appendingPathComponent(path), encoding: .utf8)
    #expect(committed == ReferencePages.render(name), "\(path) is stale: run 'make reference-docs'")
  }

  @Test func everyReasonAndFamilyIsOnItsPage() throws {
    let reasons = try #require(ReferencePages.render("reasons"))
    for entry in ReasonCatalogue.reasons { #expect(reasons.contains("| `\(entry.reason.name)` |")) }
    for entry in ReasonCatalogue.goAwayReasons { #expect(reasons.contains("| `\(entry.reason.name)` |")) }
    for entry in ReasonCatalogue.importRowReasons { #expect(reasons.contains("| `\(entry.reason.name)` |")) }
    let metrics = try #require(ReferencePages.render("metrics"))
    for family in MetricFamilies.all { #expect(metrics.contains("| `\(family.name)` |")) }
  }
}
