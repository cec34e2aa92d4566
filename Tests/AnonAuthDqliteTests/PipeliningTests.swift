import Foundation
import Testing

@testable import AnonAuthDqlite

/// What pipelining relies on, proved against a real node: dqlite 1.11 takes requests
/// written before their predecessors were answered, runs them in order, answers each, and
/// runs the ones after a failure all the same.
@Suite(.serialized) struct PipeliningTests {
  @Test func requestsSentWithoutWaitingAreAnsweredInOrder() async throws {
    let (harness, connection, database) = try await SingleNodeTests.oneNode()
    defer { withExtendedLifetime(harness) {} }
    _ = try connection.execSQL(database: database, sql: "CREATE TABLE t (k INTEGER PRIMARY KEY)")
    let insert = try connection.prepare(database: database, sql: "INSERT INTO t VALUES (?)").statement
    let roundTrips = connection.roundTrips
    let requests = connection.requestsSent

    try connection.send(database: database, statement: insert, parameters: [.integer(1)])
    try connection.send(database: database, statement: insert, parameters: [.integer(1)])
    try connection.send(database: database, statement: insert, parameters: [.integer(3)])
    #expect(connection.roundTrips == roundTrips, "sending does not wait")
    // The query travels behind them and sees what they did: the answers come back first.
    let rows = try connection.queryAll(database: database, sql: "SELECT k FROM t ORDER BY k")
    #expect(rows == [[.integer(1)], [.integer(3)]])
    #expect(connection.roundTrips == roundTrips + 1)
    #expect(connection.requestsSent == requests + 4)

    let outcomes = connection.takeSettled()
    #expect(outcomes.count == 3)
    #expect((try? outcomes[0].get())?.result?.lastInsertID == 1)
    #expect(throws: DqliteError.failure(code: 1555, message: "UNIQUE constraint failed: t.k")) {
      try outcomes[1].get()
    }
    #expect((try? outcomes[2].get())?.result?.lastInsertID == 3)
    #expect(connection.takeSettled().isEmpty)
  }

  @Test func settlingManyPipelinedRequestsIsOneRoundTrip() async throws {
    let (harness, connection, database) = try await SingleNodeTests.oneNode()
    defer { withExtendedLifetime(harness) {} }
    _ = try connection.execSQL(database: database, sql: "CREATE TABLE t (k INTEGER PRIMARY KEY)")
    let insert = try connection.prepare(database: database, sql: "INSERT INTO t VALUES (?)").statement
    _ = try connection.execSQL(database: database, sql: "BEGIN")
    let roundTrips = connection.roundTrips
    for key in 1...50 {
      try connection.send(database: database, statement: insert, parameters: [.integer(Int64(key))])
    }
    #expect(connection.hasPipelined)
    let outcomes = try connection.settle()
    #expect(outcomes.count == 50)
    #expect(outcomes.allSatisfy { (try? $0.get()) != nil })
    #expect(connection.roundTrips == roundTrips + 1)
    #expect(!connection.hasPipelined)
    #expect(try connection.settle().isEmpty)
    #expect(connection.roundTrips == roundTrips + 1, "nothing to wait for is no round trip")
    _ = try connection.execSQL(database: database, sql: "COMMIT")
    #expect(try connection.queryAll(database: database, sql: "SELECT count(*) FROM t") == [[.integer(50)]])
  }

  /// A query sent without waiting is answered in its place among the pipelined requests,
  /// with all its rows, even when they take several `ROWS` messages; a failing one keeps
  /// the connection in step.
  @Test func pipelinedQueriesAreAnsweredInTheirPlaceWithAllTheirRows() async throws {
    let (harness, connection, database) = try await SingleNodeTests.oneNode()
    defer { withExtendedLifetime(harness) {} }
    _ = try connection.execSQL(database: database, sql: "CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)")
    let insert = try connection.prepare(database: database, sql: "INSERT INTO t VALUES (?, ?)").statement
    let count = try connection.prepare(database: database, sql: "SELECT count(*) FROM t").statement
    let all = try connection.prepare(database: database, sql: "SELECT k, v FROM t ORDER BY k").statement
    let missing = try connection.prepare(database: database, sql: "SELECT k FROM t WHERE k = ?").statement
    let roundTrips = connection.roundTrips
    // Enough text that the rows need more than one ROWS message (the node's buffer is 4 KiB).
    let text = String(repeating: "x", count: 200)
    try connection.send(database: database, statement: insert, parameters: [.integer(1), .text(text)])
    try connection.sendQuery(database: database, statement: count)
    for key in 2...100 {
      try connection.send(
        database: database, statement: insert, parameters: [.integer(Int64(key)), .text(text)])
    }
    try connection.sendQuery(database: database, statement: all)
    try connection.send(database: database, statement: insert, parameters: [.integer(1), .text("again")])
    try connection.sendQuery(database: database, statement: missing, parameters: [.integer(7)])
    #expect(connection.roundTrips == roundTrips, "sending does not wait")

    let outcomes = try connection.settle()
    #expect(connection.roundTrips == roundTrips + 1)
    #expect(outcomes.count == 104)
    #expect((try outcomes[1].get()).rows == [[.integer(1)]], "the count saw the insert before it only")
    let rows = try #require(try outcomes[101].get().rows)
    #expect(rows.count == 100)
    #expect(rows.first == [.integer(1), .text(text)])
    #expect(rows.last == [.integer(100), .text(text)])
    #expect(throws: DqliteError.failure(code: 1555, message: "UNIQUE constraint failed: t.k")) {
      try outcomes[102].get()
    }
    #expect((try outcomes[103].get()).rows == [[.integer(7)]])
    #expect(try connection.queryAll(database: database, sql: "SELECT count(*) FROM t") == [[.integer(100)]])
  }

  /// Far more requests than the sockets hold, sent without reading an answer: the
  /// connection reads the older half of the answers whenever its pipeline is full, so
  /// neither side stops for the other. On the abstract unix socket a daemon's own node
  /// listens on behind the TLS gateway, without that bound the node stopped reading once
  /// its unread answers filled the socket, the sends then filled it the other way, and
  /// the test failed with "send timed out".
  @Test func aLongPipelineNeverStallsOnFullSockets() async throws {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("dqlite-\(UUID().uuidString)")
      .path
    try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: root) }
    let address = "127.0.0.1:\(try LoopbackNodes.freePort())"
    let node = try DqliteNode(
      id: 1, address: address, bindAddress: "@anonauth-test-\(UUID().uuidString)", directory: root)
    defer {
      node.stop()
      ClusterDialer.shared.unregisterLocal(address: address)
    }
    try node.start()
    let connection = try await LoopbackNodes.eventually {
      try DqliteConnector(seeds: [address]).connectToLeader()
    }
    let database = try connection.open("store")
    _ = try connection.execSQL(database: database, sql: "CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)")
    let insert = try connection.prepare(database: database, sql: "INSERT INTO t VALUES (?, ?)").statement
    _ = try connection.execSQL(database: database, sql: "BEGIN")
    let roundTrips = connection.roundTrips
    let count = 20_000
    var outcomes: [Result<DqliteAnswer, DqliteError>] = []
    for key in 1...count {
      try connection.send(
        database: database, statement: insert, parameters: [.integer(Int64(key)), .text("v")])
      outcomes += connection.takeSettled()
    }
    outcomes += try connection.settle()
    #expect(outcomes.count == count)
    #expect(outcomes.allSatisfy { (try? $0.get())?.result?.rowsAffected == 1 })
    let waits = connection.roundTrips - roundTrips
    #expect(waits >= count / DqliteConnection.maxUnanswered, "the full pipeline was read as it went")
    _ = try connection.execSQL(database: database, sql: "COMMIT")
    #expect(
      try connection.queryAll(database: database, sql: "SELECT count(*) FROM t") == [[.integer(Int64(count))]]
    )
  }

  /// Several statements in one `EXEC_SQL` run in order and stop at the first failure
  /// (dqlite 1.11's gateway prepares them one after another; parameters bind to the first
  /// only): what `executeControl` relies on.
  @Test func execSQLRunsItsStatementsInOrderAndStopsAtAFailure() async throws {
    let (harness, connection, database) = try await SingleNodeTests.oneNode()
    defer { withExtendedLifetime(harness) {} }
    _ = try connection.execSQL(database: database, sql: "CREATE TABLE t (k INTEGER PRIMARY KEY)")
    #expect(throws: DqliteError.failure(code: 1555, message: "UNIQUE constraint failed: t.k")) {
      try connection.execSQL(
        database: database,
        sql: "INSERT INTO t VALUES (?); INSERT INTO t VALUES (1); INSERT INTO t VALUES (2)",
        parameters: [.integer(1)])
    }
    #expect(try connection.queryAll(database: database, sql: "SELECT k FROM t") == [[.integer(1)]])
  }
}
