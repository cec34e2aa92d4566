import Testing

@testable import AnonAuthServer

@Suite struct HeapTuningTests {
  /// glibc takes both thresholds (mallopt answers 0 for a value out of its range, which
  /// would leave large frames on freshly mapped pages without a word).
  @Test func glibcTakesTheThresholds() {
    #expect(HeapTuning.apply())
    #expect(HeapTuning.mmapThresholdBytes >= 2 * 4 * 1024 * 1024)
  }
}
