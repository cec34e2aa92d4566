import Testing

@testable import AnonAuthDqlite

/// The client against one real node: every request the store uses, and the failures it
/// must tell apart.
@Suite(.serialized) struct SingleNodeTests {
  /// A node of its own, a connection to it (it leads at once) and the database "store".
  static func oneNode() async throws -> (LoopbackNodes, DqliteConnection, UInt32) {
    let harness = try LoopbackNodes()
    try harness.start(1)
    let connection = try await LoopbackNodes.eventually {
      try DqliteConnector(seeds: harness.seeds).connectToLeader()
    }
    return (harness, connection, try connection.open("store"))
  }

  @Test func sqlRoundTripsThroughANode() async throws {
    let (harness, connection, database) = try await Self.oneNode()
    defer { withExtendedLifetime(harness) {} }
    _ = try connection.execSQL(
      database: database, sql: "CREATE TABLE t (k TEXT PRIMARY KEY, n INTEGER, r REAL, b BLOB)")
    let inserted = try connection.execSQL(
      database: database, sql: "INSERT INTO t VALUES (?, ?, ?, ?)",
      parameters: [.text("a"), .integer(Int64.min), .real(-0.25), .blob([0, 255])])
    #expect(inserted.rowsAffected == 1 && inserted.lastInsertID == 1)

    let (statement, parameters) = try connection.prepare(
      database: database, sql: "INSERT INTO t VALUES (?, ?, NULL, NULL)")
    #expect(parameters == 2)
    for index in 0..<3 {
      _ = try connection.exec(
        database: database, statement: statement, parameters: [.text("p\(index)"), .integer(Int64(index))])
    }
    try connection.finalize(database: database, statement: statement)

    let rows = try connection.queryAll(database: database, sql: "SELECT k, n, r, b FROM t ORDER BY k")
    #expect(rows.count == 4)
    #expect(rows[0] == [.text("a"), .integer(Int64.min), .real(-0.25), .blob([0, 255])])
    #expect(rows[1] == [.text("p0"), .integer(0), .null, .null])

    // A duplicate key is SQLite's extended code, as a local connection would give it.
    #expect(throws: DqliteError.failure(code: 1555, message: "UNIQUE constraint failed: t.k")) {
      try connection.execSQL(database: database, sql: "INSERT INTO t (k) VALUES ('a')")
    }
    // The connection is still usable after a failure.
    #expect(try connection.queryAll(database: database, sql: "SELECT count(*) FROM t") == [[.integer(4)]])
  }

  @Test func aTransactionSpansRequestsAndRollsBackWhole() async throws {
    let (harness, connection, database) = try await Self.oneNode()
    defer { withExtendedLifetime(harness) {} }
    _ = try connection.execSQL(database: database, sql: "CREATE TABLE t (k INTEGER PRIMARY KEY)")
    _ = try connection.execSQL(database: database, sql: "BEGIN")
    _ = try connection.execSQL(database: database, sql: "INSERT INTO t VALUES (1)")
    _ = try connection.execSQL(database: database, sql: "SAVEPOINT job")
    _ = try connection.execSQL(database: database, sql: "INSERT INTO t VALUES (2)")
    _ = try connection.execSQL(database: database, sql: "ROLLBACK TO job")
    _ = try connection.execSQL(database: database, sql: "RELEASE job")
    _ = try connection.execSQL(database: database, sql: "COMMIT")
    #expect(try connection.queryAll(database: database, sql: "SELECT k FROM t") == [[.integer(1)]])

    _ = try connection.execSQL(database: database, sql: "BEGIN; INSERT INTO t VALUES (3); ROLLBACK")
    #expect(try connection.queryAll(database: database, sql: "SELECT k FROM t") == [[.integer(1)]])
  }

  @Test func aLargeResultArrivesInBatchesAndAnEarlyStopKeepsTheConnectionInStep() async throws {
    let (harness, connection, database) = try await Self.oneNode()
    defer { withExtendedLifetime(harness) {} }
    _ = try connection.execSQL(
      database: database,
      sql: """
        CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT);
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 50000)
        INSERT INTO t SELECT i, printf('value-%08d', i) FROM n;
        """)
    var count = 0
    var last: Int64 = 0
    let columns = try connection.querySQL(database: database, sql: "SELECT k, v FROM t ORDER BY k") { row in
      count += 1
      if case .integer(let k) = row[0] { last = k }
    }
    #expect(columns == ["k", "v"] && count == 50_000 && last == 50_000)

    struct Enough: Error {}
    #expect(throws: Enough.self) {
      _ = try connection.querySQL(database: database, sql: "SELECT k FROM t") { _ in throw Enough() }
    }
    #expect(try connection.queryAll(database: database, sql: "SELECT max(k) FROM t") == [[.integer(50_000)]])
  }

  @Test func aNodeThatIsDownIsAnIOErrorAndNoSeedIsNoLeader() throws {
    let port = try LoopbackNodes.freePort()
    #expect(throws: DqliteError.self) {
      try DqliteConnection(address: "127.0.0.1:\(port)", timeoutMs: 500).leader()
    }
    do {
      _ = try DqliteConnector(seeds: ["127.0.0.1:\(port)"], timeoutMs: 500).connectToLeader()
      Issue.record("connected to nothing")
    } catch let error {
      guard case .noLeader = error else {
        Issue.record("expected noLeader, got \(error)")
        return
      }
    }
  }
}
