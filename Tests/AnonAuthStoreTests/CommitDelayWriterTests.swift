import AnonAuthTestSupport
import Dispatch
import Foundation
import Testing

@testable import AnonAuthStore

/// The writer with a commit delay, on a real file: a stream of writes shares commits it
/// would otherwise make one by one; a lone write is not held; a batch that fills, or
/// `close`, ends a hold at once. The delays are long (up to a minute) so that a hold that
/// did not end would show as a test that runs out of time, not as a few hundred
/// milliseconds a loaded machine could also take.
@Suite("Commit delay", .timeLimit(.minutes(1)))
struct CommitDelayWriterTests {
  static let minute = 60_000_000

  /// Writes one at a time, about `gap` apart (the way the signing pool hands sign-ups
  /// over), and returns how many transactions they took.
  static func stream(
    _ store: Store, _ name: String = "streamed", count: Int, gapMicroseconds: Int
  ) async throws -> UInt64 {
    let before = store.metrics.transactions
    let itemsBefore = try await store.itemCount()
    try await withThrowingTaskGroup(of: Void.self) { group in
      for index in 0..<count {
        group.addTask { try await store.insertItem("\(name)-\(index)") }
        // Task.sleep, not usleep: tests run side by side on the cooperative pool's few
        // threads, and a blocked one would hold these writes back into one burst.
        try await Task.sleep(for: .microseconds(gapMicroseconds))
      }
      try await group.waitForAll()
    }
    #expect(try await store.itemCount() == itemsBefore + count)
    return store.metrics.transactions - before
  }

  /// Teaches the writer a short average gap without leaving any write held: `count`
  /// writes (a multiple of `maxBatch`) queue while a first write keeps the writer busy,
  /// then go in full batches.
  static func prime(_ store: Store, count: Int) async throws {
    let writer = try await HeldWriter.hold(store)
    try await withThrowingTaskGroup(of: Void.self) { group in
      for index in 0..<count { group.addTask { try await store.insertItem("priming-\(index)") } }
      while store.metrics.queuedWrites < count { try await Task.sleep(for: .milliseconds(1)) }
      writer.release()
      try await group.waitForAll()
    }
    try await writer.finished()
    #expect(store.metrics.heldBatches == 0)
  }

  /// Submits one write and returns once the writer holds it.
  static func heldWrite(_ store: Store, _ name: String) async throws -> Task<Int64, any Error> {
    let held = store.metrics.heldBatches
    let task = Task { try await store.insertItem(name) }
    while store.metrics.heldBatches == held { try await Task.sleep(for: .milliseconds(1)) }
    return task
  }

  @Test("a stream of writes shares commits: 200 writes 0.5 ms apart, delay 200 ms")
  func streamShares() async throws {
    try await withStore(configure: { $0.commitDelayMicroseconds = 200_000 }) { store, _ in
      let transactions = try await Self.stream(store, count: 200, gapMicroseconds: 500)
      // The first ~20 writes teach the average gap; after that each 200 ms gathers the
      // writes of its window. Without the delay each write, committed well within the
      // gap, had a transaction of its own (200).
      #expect(transactions <= 100, "transactions: \(transactions)")
      #expect(store.metrics.heldBatches > 0)
    }
  }

  @Test("a lone write is not held, whatever the delay")
  func loneWrite() async throws {
    try await withStore(configure: { $0.commitDelayMicroseconds = Self.minute }) { store, _ in
      try await store.insertItem("alone")
      #expect(store.metrics.heldBatches == 0)
    }
  }

  @Test("a batch that fills commits at once instead of waiting out the delay")
  func fullBatch() async throws {
    try await withStore(
      configure: {
        $0.commitDelayMicroseconds = Self.minute
        $0.maxBatch = 4
      }
    ) { store, _ in
      try await Self.prime(store, count: 40)
      let first = try await Self.heldWrite(store, "first")
      let started = DispatchTime.now().uptimeNanoseconds
      try await withThrowingTaskGroup(of: Void.self) { group in
        for index in 0..<3 { group.addTask { try await store.insertItem("filler-\(index)") } }
        try await group.waitForAll()
      }
      _ = try await first.value
      let waited = DispatchTime.now().uptimeNanoseconds - started
      #expect(waited < 30_000_000_000, "waited \(waited) ns")
      #expect(store.metrics.lastBatchSize == 4)
    }
  }

  @Test("closing the store ends a hold: the held write commits")
  func closeEndsHold() async throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    var options = StoreOptions(path: directory.file("store.sqlite"))
    options.commitDelayMicroseconds = Self.minute
    options.maxBatch = 4
    let store = try Store.open(options: options, migrations: TestSchema.all)
    try await Self.prime(store, count: 40)
    let last = try await Self.heldWrite(store, "last")
    let started = DispatchTime.now().uptimeNanoseconds
    await store.close()
    let waited = DispatchTime.now().uptimeNanoseconds - started
    #expect(waited < 30_000_000_000, "waited \(waited) ns")
    _ = try await last.value
  }

  @Test func outOfRangeDelaysAreRefused() throws {
    for bad in [-1, 60_000_001] {
      var options = StoreOptions(path: "/tmp/unused.sqlite")
      options.commitDelayMicroseconds = bad
      #expect(throws: StoreError.self) { try options.validate() }
    }
  }
}
