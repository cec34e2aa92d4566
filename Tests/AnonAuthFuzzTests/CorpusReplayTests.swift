import AnonAuthFuzz
import Foundation
import Testing

/// `make test` runs every fuzz target over its seed corpus and over every input a
/// fuzzing run ever found (`Tests/Fuzz/crashes/TARGET/`, kept after the fix), so a parser
/// that regresses on any of them fails here, without a sanitizer build.
@Suite struct CorpusReplayTests {
  static let root = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fuzz")

  static func inputs(_ folder: String, _ target: FuzzTarget) -> [URL] {
    let directory = root.appendingPathComponent(folder).appendingPathComponent(target.rawValue)
    let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
    return names.filter { !$0.hasPrefix(".") }.sorted().map { directory.appendingPathComponent($0) }
  }

  @Test(arguments: FuzzTarget.allCases)
  func seedCorpusReplays(target: FuzzTarget) throws {
    let seeds = Self.inputs("corpus", target)
    #expect(seeds.count >= 3, "every target has a seed corpus in Tests/Fuzz/corpus/\(target.rawValue)")
    for url in seeds + Self.inputs("crashes", target) {
      target.run(Array(try Data(contentsOf: url)))
    }
  }
}
