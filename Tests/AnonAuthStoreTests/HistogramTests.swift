import Testing

@testable import AnonAuthStore

@Suite("Store histograms")
struct HistogramTests {
  @Test("buckets are cumulative; values above every bound count only in +Inf")
  func cumulative() {
    var histogram = HistogramSnapshot(bounds: [1, 2, 4])
    for value in [0.5, 1, 3, 3, 100] { histogram.observe(value) }
    #expect(histogram.cumulativeCounts == [2, 2, 4])
    #expect(histogram.count == 5)
    #expect(histogram.sum == 107.5)
  }

  @Test("every transaction and every committed write is in the histograms")
  func fedByTheWriter() async throws {
    try await withStore { store, _ in
      let before = store.metrics
      try await withThrowingTaskGroup(of: Int64.self) { group in
        for index in 0..<200 { group.addTask { try await store.insertItem("h-\(index)") } }
        for try await _ in group {}
      }
      let after = store.metrics
      let transactions = after.transactions - before.transactions
      #expect(after.batchSizes.count - before.batchSizes.count == transactions)
      #expect(after.commitSeconds.count - before.commitSeconds.count == transactions)
      #expect(after.writeSeconds.count - before.writeSeconds.count == 200)
      // Batch sizes sum to the writes committed; a write waits at least its commit.
      #expect(after.batchSizes.sum - before.batchSizes.sum == 200)
      #expect(after.writeSeconds.sum >= after.commitSeconds.sum - before.commitSeconds.sum)
      #expect(after.batchSizes.cumulativeCounts.last == after.batchSizes.count)
    }
  }
}
