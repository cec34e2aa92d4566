import Testing

@testable import AnonAuthStore

/// Statements a job does not read the answer of travel to the replicated store's leader
/// without waiting (`Database.executePipelined`): fewer round trips per job, and errors
/// that stay as exact as when each statement waited.
@Suite("Pipelined statements", .serialized)
struct PipelinedJobTests {
  static let insert = "INSERT INTO items(name) VALUES (?)"

  /// The writer's round trips for one job that runs alone in its batch.
  static func roundTrips(_ store: Store, _ job: @escaping @Sendable (Database) throws -> Void) async throws
    -> UInt64
  {
    let before = store.metrics.writerRoundTrips
    try await store.write(job)
    return store.metrics.writerRoundTrips - before
  }

  @Test("a job's pipelined statements cost one round trip together, not one each")
  func oneRoundTripForAJobsStatements() async throws {
    try await withStore(engine: .cluster) { store, _ in
      // Prepares the statement on the writer's link, so that no PREPARE is counted below.
      try await store.write { database in try database.execute(Self.insert, [.text("warm")]) }

      let waiting = try await Self.roundTrips(store) { database in
        for name in ["a", "b", "c"] { try database.execute(Self.insert, [.text(name)]) }
      }
      let requests = store.metrics.writerRequests
      let pipelined = try await Self.roundTrips(store) { database in
        for name in ["d", "e", "f"] { try database.executePipelined(Self.insert, [.text(name)]) }
      }
      #expect(store.metrics.writerRequests - requests == 2 + 3, "the same requests, fewer waits")
      // BEGIN with the job's SAVEPOINT, and RELEASE with COMMIT, are one request each.
      #expect(waiting == 2 + 3)
      #expect(pipelined == 2 + 1)
      #expect(try await store.itemNames() == ["warm", "a", "b", "c", "d", "e", "f"] as Set)
    }
  }

  @Test("a batch waits for the leader three times, however many jobs it holds")
  func oneRoundTripPerJobInABatch() async throws {
    try await withStore(engine: .cluster) { store, _ in
      try await store.write { database in try database.execute(Self.insert, [.text("warm")]) }
      let before = store.metrics.writerRoundTrips
      let names = ["a", "b", "c", "d"]
      let batch = try await GroupCommitTests().runAsOneBatch(
        store, names.map { name in { database in try database.executePipelined(Self.insert, [.text(name)]) } }
      )
      #expect(batch.size == names.count)
      #expect(batch.outcomes.allSatisfy { $0 == nil })
      // The batch that held the writer: BEGIN, COMMIT. This one: BEGIN, one wait for
      // every job's statements (each with the next SAVEPOINT behind it), COMMIT.
      #expect(store.metrics.writerRoundTrips - before == 2 + 3)
      #expect(try await store.itemNames() == Set(["warm"] + names))
    }
  }

  @Test("a query travels with the pipelined statements before it and sees what they did")
  func queryAfterPipelinedStatements() async throws {
    try await withStore(engine: .cluster) { store, _ in
      try await store.write { database in
        try database.execute(Self.insert, [.text("warm")])
        _ = try database.query("SELECT count(*) FROM items")
      }
      let before = store.metrics.writerRoundTrips
      let counted = try await store.write { database in
        try database.executePipelined(Self.insert, [.text("x")])
        try database.executePipelined(Self.insert, [.text("y")])
        return try database.queryOne("SELECT count(*) FROM items").map { try $0.int64(0) }
      }
      #expect(counted == 3)
      #expect(store.metrics.writerRoundTrips - before == 2 + 1)
    }
  }

  @Test(
    "a pipelined statement that fails fails its own job, whose savepoint is rolled back; the batch commits",
    arguments: Engine.allCases)
  func failureStaysWithItsJob(engine: Engine) async throws {
    try await withStore(engine: engine) { store, _ in
      try await store.insertItem("taken")
      let batch = try await GroupCommitTests().runAsOneBatch(
        store,
        [
          { database in try database.executePipelined(Self.insert, [.text("first")]) },
          // Fails at the job's end, when the writer waits for its answers; the statement
          // after the failure ran on the leader all the same and is taken back with it.
          { database in
            try database.executePipelined(Self.insert, [.text("taken")])
            try database.executePipelined(Self.insert, [.text("after-taken")])
          },
          // Fails at its query, the first call that waits. (Its first run, ahead of the
          // answers, finds the failure of the job before it instead: that run is dropped,
          // and this job runs again once that one is taken back.)
          { database in
            try database.executePipelined(Self.insert, [.text("taken")])
            try database.executePipelined(Self.insert, [.text("before-query")])
            _ = try database.query("SELECT count(*) FROM items")
            throw QueryDidNotThrow()
          },
          // A statement that waits goes only after the pipelined ones answered.
          { database in
            try database.executePipelined(Self.insert, [.text("taken")])
            try database.execute(Self.insert, [.text("never")])
          },
          { database in try database.executePipelined(Self.insert, [.text("last")]) },
        ])
      #expect(batch.size == 5)
      #expect(batch.outcomes[0] == nil)
      for index in 1...3 {
        let failure = try #require(batch.outcomes[index] as? StoreError, "job \(index)")
        #expect(failure.isUniqueViolation, "job \(index): \(failure)")
        #expect(failure.sql == Self.insert)
      }
      #expect(batch.outcomes[4] == nil)
      #expect(try await store.itemNames() == ["taken", "first", "last"] as Set)
    }
  }

  @Test("on the single file a pipelined statement runs at once, and no round trip is counted")
  func singleFile() async throws {
    try await withStore(engine: .file) { store, _ in
      try await store.write { database in try database.executePipelined(Self.insert, [.text("one")]) }
      #expect(store.metrics.writerRoundTrips == 0)
    }
  }
}

/// What a job throws when a query it expected to fail did not.
struct QueryDidNotThrow: Error {}

extension PipelinedJobTests {
  @Test("a statement sent after a failure that surfaced while preparing it is answered to no other job")
  func answerSentAfterAFailureStaysWithItsJob() async throws {
    try await withStore(engine: .cluster) { store, _ in
      try await store.insertItem("taken")
      try await store.write { database in try database.execute(Self.insert, [.text("warm")]) }
      let batch = try await GroupCommitTests().runAsOneBatch(
        store,
        [
          { database in
            try database.executePipelined(Self.insert, [.text("taken")])
            // Not prepared yet on this link: its PREPARE reads the failure above, which
            // is thrown after this INSERT was sent.
            try database.executePipelined(
              "INSERT INTO items(name, note) VALUES (?, 'sent')", [.text("stray")])
          },
          { database in try database.executePipelined(Self.insert, [.text("taken")]) },
          { database in try database.executePipelined(Self.insert, [.text("last")]) },
        ])
      #expect(batch.size == 3)
      for index in 0...1 {
        let failure = try #require(batch.outcomes[index] as? StoreError, "job \(index)")
        #expect(failure.isUniqueViolation, "job \(index): \(failure)")
        #expect(failure.sql == Self.insert, "job \(index)")
      }
      #expect(batch.outcomes[2] == nil)
      #expect(try await store.itemNames() == ["taken", "warm", "last"] as Set)
    }
  }
}
