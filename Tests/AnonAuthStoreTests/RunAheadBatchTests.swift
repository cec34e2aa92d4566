import Dispatch
import Synchronization
import Testing

@testable import AnonAuthStore

/// On the replicated store a batch's jobs run ahead of the leader's answers
/// (`Writer.commitPipelined`): a failure found late takes back its job and the jobs after
/// it, which run again, each waited for; the jobs before it commit.
@Suite("Batches that run ahead of their answers", .serialized)
struct RunAheadBatchTests {
  static let insert = PipelinedJobTests.insert

  /// How many times each job of a batch ran.
  final class Runs: Sendable {
    private let counts: Mutex<[Int: Int]> = Mutex([:])
    func ran(_ job: Int) { counts.withLock { $0[job, default: 0] += 1 } }
    func of(_ job: Int) -> Int { counts.withLock { $0[job, default: 0] } }
  }

  /// What a job fails with when its expectation is not met.
  struct NotChanged: Error, Equatable {
    let name: String
  }

  @Test(
    "a failure found after later jobs ran fails its job only: the later jobs run again and commit",
    arguments: Engine.allCases)
  func lateFailureTakesBackItsJobAndRerunsTheLaterOnes(engine: Engine) async throws {
    try await withStore(engine: engine) { store, _ in
      try await store.insertItem("taken")
      try await store.write { database in try database.execute(Self.insert, [.text("warm")]) }
      let runs = Runs()
      let names = ["a", "b", "taken", "c", "d", "e"]
      let batch = try await GroupCommitTests().runAsOneBatch(
        store,
        names.enumerated().map { index, name in
          { database in
            runs.ran(index)
            try database.executePipelined(Self.insert, [.text(name)])
          }
        })
      #expect(batch.size == names.count)
      for (index, outcome) in batch.outcomes.enumerated() where index != 2 {
        #expect(outcome == nil, "job \(index): \(String(describing: outcome))")
      }
      let failure = try #require(batch.outcomes[2] as? StoreError)
      #expect(failure.isUniqueViolation)
      #expect(try await store.itemNames() == ["taken", "warm", "a", "b", "c", "d", "e"] as Set)
      // The jobs before the failure ran once; the failed one once; the ones after it ran
      // ahead once and again after the take-back on the replicated store.
      let again = engine == .cluster ? 2 : 1
      #expect((0...2).map(runs.of) == [1, 1, 1])
      #expect((3...5).map(runs.of) == [again, again, again])
    }
  }

  @Test(
    "after two take-backs, each later job is waited for: one failing job after another runs no job more than four times"
  )
  func manyFailuresRunNoJobMoreThanTwice() async throws {
    try await withStore(engine: .cluster) { store, _ in
      try await store.insertItem("taken")
      try await store.write { database in try database.execute(Self.insert, [.text("warm")]) }
      let runs = Runs()
      let count = 24
      let roundTrips = store.metrics.writerRoundTrips
      let batch = try await GroupCommitTests().runAsOneBatch(
        store,
        (0..<count).map { index in
          { database in
            runs.ran(index)
            // Every other job fails.
            try database.executePipelined(
              Self.insert, [.text(index.isMultiple(of: 2) ? "taken" : "n\(index)")])
          }
        })
      #expect(batch.size == count)
      for (index, outcome) in batch.outcomes.enumerated() {
        if index.isMultiple(of: 2) {
          #expect((outcome as? StoreError)?.isUniqueViolation == true, "job \(index)")
        } else {
          #expect(outcome == nil, "job \(index): \(String(describing: outcome))")
        }
      }
      #expect((0..<count).allSatisfy { runs.of($0) <= PipelinedBatch.restarts + 2 })
      #expect(runs.of(count - 1) == PipelinedBatch.restarts + 2, "ahead, after each restart, then waited for")
      #expect(runs.of(0) == 1)
      let odd = (0..<count).filter { !$0.isMultiple(of: 2) }
      #expect(try await store.itemNames() == Set(["taken", "warm"] + odd.map { "n\($0)" }))
      // Bounded: the blocker's two, then about a wait and a take-back a job.
      #expect(store.metrics.writerRoundTrips - roundTrips <= 2 + 3 + 3 * UInt64(count))
    }
  }

  @Test(
    "a statement that must change one row and changes none fails its job with the job's own error",
    arguments: Engine.allCases)
  func unmetExpectationFailsItsJob(engine: Engine) async throws {
    try await withStore(engine: engine) { store, _ in
      try await store.insertItem("taken")
      let conditional =
        "INSERT INTO items(name) SELECT ?1 WHERE NOT EXISTS (SELECT 1 FROM items WHERE name = ?1)"
      let batch = try await GroupCommitTests().runAsOneBatch(
        store,
        ["a", "taken", "b"].map { name in
          { database in
            try database.executePipelined(
              conditional, [.text(name)], expectingChanges: 1, else: { NotChanged(name: name) })
            // The job goes on as if it had changed the row: its later statements are
            // taken back with it.
            try database.executePipelined(Self.insert, [.text("\(name)-after")])
          }
        })
      #expect(batch.outcomes[0] == nil)
      #expect(batch.outcomes[1] as? NotChanged == NotChanged(name: "taken"))
      #expect(batch.outcomes[2] == nil)
      #expect(try await store.itemNames() == ["taken", "a", "a-after", "b", "b-after"] as Set)
    }
  }

  @Test(
    "a pipelined query's rows are there once the write returns, and see the job's statements before it",
    arguments: Engine.allCases)
  func pipelinedQueryRowsArriveWithTheWrite(engine: Engine) async throws {
    try await withStore(engine: engine) { store, _ in
      try await store.write { database in try database.execute(Self.insert, [.text("warm")]) }
      let roundTrips = store.metrics.writerRoundTrips
      let rows = try await store.write { database in
        try database.executePipelined(Self.insert, [.text("x")])
        let rows = try database.queryPipelined("SELECT name FROM items ORDER BY name")
        try database.executePipelined(Self.insert, [.text("y")])
        return rows
      }
      #expect(try rows.rows().map { try $0.string(0) } == ["warm", "x"])
      if engine == .cluster {
        // BEGIN, the job's answers, COMMIT (and the statements' first PREPAREs).
        #expect(store.metrics.writerRoundTrips - roundTrips <= 3 + 2)
      }
    }
  }

  @Test("a pipelined query's handle read before its answer arrived says so")
  func rowsReadTooEarly() {
    #expect(throws: StoreError.self) { try PipelinedRows().rows() }
  }
}

extension RunAheadBatchTests {
  @Test(
    "a failed job's caller hears of it only once the batch is over: a read then sees the jobs committed with it",
    arguments: Engine.allCases)
  func failuresAreToldAfterTheBatch(engine: Engine) async throws {
    try await withStore(engine: engine) { store, _ in
      try await store.insertItem("taken")
      let seen = Mutex<Set<String>?>(nil)
      let writer = try await HeldWriter.hold(store)
      async let first: Void = store.write { database in
        try database.executePipelined(Self.insert, [.text("a")])
      }
      try await GroupCommitTests().waitUntil { store.metrics.queuedWrites == 1 }
      async let second: Void = {
        do {
          try await store.write { database in try database.executePipelined(Self.insert, [.text("taken")]) }
          Issue.record("the second job must fail")
        } catch {
          // What a refused sign-up's caller does: read the state its job was refused on.
          let names = try await store.itemNames()
          seen.withLock { $0 = names }
        }
      }()
      try await GroupCommitTests().waitUntil { store.metrics.queuedWrites == 2 }
      writer.release()
      try await writer.finished()
      try await first
      try await second
      #expect(store.metrics.lastBatchSize == 2)
      #expect(seen.withLock { $0 } == ["taken", "a"], "the read ran after the batch's COMMIT")
    }
  }

  @Test("a job whose link broke under it cannot go on outside its transaction: nothing of it commits")
  func noStatementOutlivesALostTransaction() async throws {
    try await withStore(engine: .cluster) { store, _ in
      try await store.write { database in try database.execute(Self.insert, [.text("warm")]) }
      await #expect(throws: StoreError.self) {
        try await store.write { database in
          try database.executePipelined(Self.insert, [.text("before")])
          database.breakLinkForTesting()
          // A job that swallows the broken link's error and goes on…
          _ = try? database.query("SELECT count(*) FROM items")
          // …must not reach a new link, where this would commit on its own.
          try database.execute(Self.insert, [.text("after")])
        }
      }
      #expect(try await store.itemNames() == ["warm"])
      // The writer learned it: the next batch runs on a new link.
      try await store.write { database in try database.execute(Self.insert, [.text("next")]) }
      #expect(try await store.itemNames() == ["warm", "next"])
    }
  }
}
