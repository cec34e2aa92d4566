import Testing

@testable import AnonAuthDqlite

/// Three real nodes in this process: membership through ADD and ASSIGN, a leader stopped
/// with writes acknowledged, the survivors electing another, and the stopped node coming
/// back with everything it missed.
@Suite(.serialized) struct ClusterTests {
  /// Numeric addresses, and names that each node resolves (as pods know each other).
  @Test(arguments: [nil, "localhost"])
  func threeVotersSurviveLosingTheLeaderAndTheLeaderCatchesUp(hostName: String?) async throws {
    let harness = try LoopbackNodes(hostName: hostName)
    for id: UInt64 in 1...3 { try harness.start(id) }
    let seeds = harness.seeds
    let connector = DqliteConnector(seeds: seeds, timeoutMs: 10_000)
    let first = try await LoopbackNodes.eventually { try connector.connectToLeader() }
    for id: UInt64 in 2...3 {
      try first.add(id: id, address: harness.addresses[id] ?? "")
      try first.assign(id: id, role: .voter)
    }
    let members = try first.cluster()
    #expect(members.count == 3 && members.allSatisfy { $0.role == .voter })

    let database = try first.open("store")
    _ = try first.execSQL(database: database, sql: "CREATE TABLE t (k INTEGER PRIMARY KEY)")
    for k in 1...100 {
      _ = try first.execSQL(
        database: database, sql: "INSERT INTO t VALUES (?)", parameters: [.integer(Int64(k))])
    }
    first.close()

    // Stop whoever leads now; the other two elect a leader and keep every row.
    let leaderID = try connector.findLeader().id
    harness.stop(leaderID)
    let (second, survivors) = try await LoopbackNodes.eventually(seconds: 20) {
      () throws -> (DqliteConnection, UInt32) in
      let connection = try connector.connectToLeader()
      let database = try connection.open("store")
      _ = try connection.execSQL(database: database, sql: "INSERT INTO t VALUES (101)")
      return (connection, database)
    }
    let newLeader = try #require(try second.leader())
    #expect(newLeader.id != leaderID)
    #expect(
      try second.queryAll(database: survivors, sql: "SELECT count(*), max(k) FROM t") == [
        [.integer(101), .integer(101)]
      ])

    // The stopped node starts again, catches up, and can lead with all 101 rows.
    try harness.start(leaderID)
    try await LoopbackNodes.eventually(seconds: 20) {
      let leader = try connector.connectToLeader()
      defer { leader.close() }
      if try leader.leader()?.id != leaderID { try leader.transfer(to: leaderID) }
      let back = try DqliteConnection(address: harness.addresses[leaderID] ?? "", timeoutMs: 10_000)
      defer { back.close() }
      guard try back.leader()?.id == leaderID else { throw DqliteError.noLeader("not yet") }
      let rows = try back.queryAll(database: try back.open("store"), sql: "SELECT count(*) FROM t")
      #expect(rows == [[.integer(101)]])
    }
    second.close()
  }
}
