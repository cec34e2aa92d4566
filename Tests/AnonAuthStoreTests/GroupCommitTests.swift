import Dispatch
import Synchronization
import Testing

@testable import AnonAuthStore

@Suite("Group commit")
struct GroupCommitTests {
  @Test("500 concurrent writes all commit, in far fewer than 500 transactions", arguments: Engine.allCases)
  func batching(engine: Engine) async throws {
    try await withStore(engine: engine) { store, _ in
      let before = store.metrics
      let ids = try await withThrowingTaskGroup(of: Int64.self) { group in
        for index in 0..<500 {
          group.addTask { try await store.insertItem("item-\(index)") }
        }
        var ids: Set<Int64> = []
        for try await id in group { ids.insert(id) }
        return ids
      }
      #expect(ids.count == 500)
      #expect(try await store.itemCount() == 500)
      let names = try await store.itemNames()
      #expect(names == Set((0..<500).map { "item-\($0)" }))

      let metrics = store.metrics
      let transactions = metrics.transactions - before.transactions
      #expect(metrics.writesCommitted - before.writesCommitted == 500)
      #expect(transactions < 250, "transactions: \(transactions)")
      #expect(metrics.averageBatchSize > 1)
      #expect(metrics.commitNanoseconds > 0)
      #expect(metrics.queuedWrites == 0)
    }
  }

  @Test(
    "a job that fails in a batch gets its own error; the others in the batch commit",
    arguments: Engine.allCases)
  func failingJobInBatch(engine: Engine) async throws {
    try await withStore(engine: engine) { store, _ in
      try await store.insertItem("taken")
      let batch = try await runAsOneBatch(
        store,
        [
          { database in try database.execute("INSERT INTO items(name) VALUES ('first')") },
          { database in try database.execute("INSERT INTO items(name) VALUES ('taken')") },
          { database in
            try database.execute("INSERT INTO items(name) VALUES ('half')")
            throw JobFailed(name: "after a change")
          },
          { database in try database.execute("INSERT INTO items(name) VALUES ('last')") },
        ])
      #expect(batch.size == 4)
      #expect(batch.outcomes[0] == nil)
      let unique = try #require(batch.outcomes[1] as? StoreError)
      #expect(unique.isUniqueViolation)
      #expect(unique.kind == .constraint)
      #expect(batch.outcomes[2] as? JobFailed == JobFailed(name: "after a change"))
      #expect(batch.outcomes[3] == nil)
      #expect(try await store.itemNames() == ["taken", "first", "last"])
      #expect(store.metrics.writesFailed >= 2)
    }
  }

  @Test("a deferred foreign-key violation fails its own job, not the batch")
  func deferredForeignKey() async throws {
    try await withStore { store, _ in
      let batch = try await runAsOneBatch(
        store,
        [
          { database in try database.execute("INSERT INTO items(id, name) VALUES (1, 'one')") },
          { database in try database.execute("INSERT INTO tags(item_id, tag) VALUES (99, 'orphan')") },
          { database in try database.execute("INSERT INTO tags(item_id, tag) VALUES (1, 'ok')") },
        ])
      #expect(batch.size == 3)
      #expect(batch.outcomes[0] == nil)
      let error = try #require(batch.outcomes[1] as? StoreError)
      #expect(error.isConstraintViolation && !error.isUniqueViolation)
      #expect(batch.outcomes[2] == nil)
      let tags = try await store.read { database in
        try database.query("SELECT tag FROM tags").map { try $0.string(0) }
      }
      #expect(tags == ["ok"])
    }
  }

  @Test("when COMMIT fails, every job of the batch gets the error and nothing is kept")
  func commitFailure() async throws {
    try await withStore { store, _ in
      let batch = try await runAsOneBatch(
        store,
        [
          { database in try database.execute("INSERT INTO items(name) VALUES ('a')") },
          { database in
            try database.execute("INSERT INTO items(name) VALUES ('b')")
            database.rejectCommits(true)
          },
          { database in try database.execute("INSERT INTO items(name) VALUES ('c')") },
        ])
      #expect(batch.outcomes.count == 3)
      for outcome in batch.outcomes {
        let error = try #require(outcome as? StoreError)
        #expect(error.isConstraintViolation, "\(error)")
        #expect(error.sql == "COMMIT")
      }
      // The writer goes on after a failed COMMIT.
      try await store.write { database in database.rejectCommits(false) }
      try await store.insertItem("after")
      #expect(try await store.itemNames() == ["after"])
    }
  }

  /// The outcome of each job (nil for success) and the size of the batch they ran in.
  struct BatchResult {
    var outcomes: [(any Error)?]
    var size: Int
  }

  /// Holds the writer busy with a blocking job, queues `jobs` behind it, then lets it go,
  /// so that the queued jobs share the next transaction.
  func runAsOneBatch(
    _ store: Store, _ jobs: [@Sendable (Database) throws -> Void]
  ) async throws -> BatchResult {
    let writer = try await HeldWriter.hold(store)
    let outcomes = await withTaskGroup(of: (Int, (any Error)?).self) { group in
      for (index, job) in jobs.enumerated() {
        group.addTask {
          do {
            try await store.write(job)
            return (index, nil)
          } catch {
            return (index, error)
          }
        }
      }
      try? await waitUntil { store.metrics.queuedWrites == jobs.count }
      writer.release()
      var outcomes = [(any Error)?](repeating: nil, count: jobs.count)
      for await (index, error) in group { outcomes[index] = error }
      return outcomes
    }
    try await writer.finished()
    return BatchResult(outcomes: outcomes, size: store.metrics.lastBatchSize)
  }

  func waitUntil(_ condition: @Sendable () -> Bool) async throws {
    for _ in 0..<500 {
      if condition() { return }
      try await Task.sleep(for: .milliseconds(10))
    }
    Issue.record("condition not met in time")
  }
}

/// A flag one thread raises and another polls.
final class Flag: Sendable {
  private let raised = Atomic<Bool>(false)
  func set() { raised.store(true, ordering: .releasing) }
  var isSet: Bool { raised.load(ordering: .acquiring) }
}
