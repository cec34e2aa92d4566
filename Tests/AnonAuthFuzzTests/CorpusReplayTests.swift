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

  /// The replay runs on a thread of its own: some targets (the JSON API, the HTTP/2
  /// session) wait for async work with a semaphore, as libFuzzer's synchronous callback
  /// must, and a test blocking one of the cooperative pool's few threads (two on a
  /// two-core machine) would stall every other suite running beside it.
  @Test(arguments: FuzzTarget.allCases)
  func seedCorpusReplays(target: FuzzTarget) async throws {
    let seeds = Self.inputs("corpus", target)
    #expect(seeds.count >= 3, "every target has a seed corpus in Tests/Fuzz/corpus/\(target.rawValue)")
    let inputs = try (seeds + Self.inputs("crashes", target)).map { Array(try Data(contentsOf: $0)) }
    await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
      let thread = Thread {
        for input in inputs { target.run(input) }
        done.resume()
      }
      thread.stackSize = 8 << 20
      thread.start()
    }
  }
}
