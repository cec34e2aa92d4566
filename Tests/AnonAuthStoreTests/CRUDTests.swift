import AnonAuthStore
import Testing

@Suite("Reading and writing through the store")
struct CRUDTests {
  @Test("insert, read, update and delete a row", arguments: Engine.allCases)
  func crud(engine: Engine) async throws {
    try await withStore(engine: engine) { store, _ in
      let id = try await store.insertItem("alpha", score: 1.5)
      #expect(id > 0)

      let row = try await store.read { database in
        try database.queryOne("SELECT id, name, score, data, flag FROM items WHERE id = ?", [.integer(id)])
      }
      let found = try #require(row)
      #expect(try found.int64(0) == id)
      #expect(try found.string(1) == "alpha")
      #expect(try found.double(2) == 1.5)
      #expect(try found.isNull(3))
      #expect(try found.bool(4) == false)

      let changed = try await store.write { database in
        try database.execute(
          "UPDATE items SET flag = ?, note = ? WHERE id = ?", [true, "noted", .integer(id)])
        return database.changes
      }
      #expect(changed == 1)
      let flagged = try await store.read { database in
        try database.queryOne("SELECT flag, note FROM items WHERE id = ?", [.integer(id)])
      }
      #expect(try flagged?.bool(0) == true)
      #expect(try flagged?.optionalString(1) == "noted")

      let deleted = try await store.write { database in
        try database.execute("DELETE FROM items WHERE name = ?", ["alpha"])
        return database.changes
      }
      #expect(deleted == 1)
      #expect(try await store.itemCount() == 0)
    }
  }

  @Test(
    "every kind of value comes back as it went in",
    arguments: Engine.allCases,
    [
      SQLValue.null, .integer(0), .integer(Int64.max), .integer(Int64.min), .real(-0.25),
      .real(1e300), .text(""), .text("héllo, 世界 🙂"), .text("nul\u{0}inside"), .blob([]),
      .blob([0, 255, 0, 1]), .blob(Array(repeating: 7, count: 100_000)),
    ])
  func roundTrip(engine: Engine, _ value: SQLValue) async throws {
    try await withStore(engine: engine) { store, _ in
      if engine == .cluster, case .text(let text) = value, text.contains("\u{0}") {
        // dqlite's wire carries text NUL-terminated: the replicated engine refuses it
        // rather than store a cut string.
        let error = await #expect(throws: StoreError.self) {
          try await store.write { database in
            try database.execute("CREATE TABLE values_(v)")
            try database.execute("INSERT INTO values_(v) VALUES (?)", [value])
          }
        }
        #expect(error?.kind == .invalidArgument)
        return
      }
      let back = try await store.write { database in
        try database.execute("CREATE TABLE values_(v)")
        try database.execute("INSERT INTO values_(v) VALUES (?)", [value])
        return try database.queryOne("SELECT v FROM values_")?.value(0)
      }
      #expect(back == value)
      let read = try await store.read { database in try database.queryOne("SELECT v FROM values_")?[0] }
      #expect(read == value)
    }
  }

  @Test("forEach streams rows, and a nested query on the same SQL works", arguments: Engine.allCases)
  func forEachStreams(engine: Engine) async throws {
    try await withStore(engine: engine) { store, _ in
      for name in ["a", "b", "c"] { try await store.insertItem(name) }
      let pairs = try await store.read { database in
        var pairs: [String] = []
        let sql = "SELECT name FROM items ORDER BY name"
        try database.forEach(sql) { outer in
          let first = try database.queryOne(sql)?.string(0) ?? "?"
          pairs.append(try outer.string(0) + first)
        }
        return pairs
      }
      #expect(pairs == ["aa", "ba", "ca"])
    }
  }

  @Test("an error thrown by a forEach body stops the scan and reaches the caller", arguments: Engine.allCases)
  func forEachBodyError(engine: Engine) async throws {
    try await withStore(engine: engine) { store, _ in
      for name in ["a", "b", "c"] { try await store.insertItem(name) }
      let seen = try await store.read { database in
        var seen = 0
        #expect(throws: JobFailed(name: "stop")) {
          try database.forEach("SELECT name FROM items") { _ in
            seen += 1
            if seen == 2 { throw JobFailed(name: "stop") }
          }
        }
        // The statement was reset: the same SQL runs again from the start.
        let again = try database.query("SELECT name FROM items")
        #expect(again.count == 3)
        return seen
      }
      #expect(seen == 2)
    }
  }

  @Test("the same SQL is prepared once and reused", arguments: Engine.allCases)
  func statementCache(engine: Engine) async throws {
    try await withStore(engine: engine) { store, _ in
      let (first, afterMany) = try await store.write { database in
        try database.execute("INSERT INTO items(name) VALUES (?)", ["x0"])
        let first = database.statementsPrepared
        for index in 1...50 {
          try database.execute("INSERT INTO items(name) VALUES (?)", [.text("x\(index)")])
        }
        return (first, database.statementsPrepared)
      }
      #expect(afterMany == first)
      #expect(try await store.itemCount() == 51)
    }
  }

  @Test("the cache starts over past its limit without breaking a statement still running")
  func statementCacheLimit() async throws {
    try await withStore { store, _ in
      for name in ["a", "b", "c"] { try await store.insertItem(name) }
      let (names, prepared) = try await store.read { database in
        var names: [String] = []
        let before = database.statementsPrepared
        try database.forEach("SELECT name FROM items ORDER BY name") { row in
          names.append(try row.string(0))
          for index in 0..<200 { _ = try database.queryOne("SELECT \(index) + \(names.count)") }
        }
        return (names, database.statementsPrepared - before)
      }
      #expect(names == ["a", "b", "c"])
      #expect(prepared == 601)
    }
  }

  @Test(
    "SQL the store cannot run is refused with a clear error",
    arguments: Engine.allCases,
    [
      ("SELECT 1; SELECT 2", [SQLValue]()), ("SELECT ?", []), ("SELECT 1", [1]), ("", []),
      ("SELEKT 1", []),
    ])
  func badSQL(engine: Engine, _ sample: (String, [SQLValue])) async throws {
    let (sql, arguments) = sample
    try await withStore(engine: engine) { store, _ in
      let error = await #expect(throws: StoreError.self) {
        try await store.read { database in try database.execute(sql, arguments) }
      }
      #expect(error?.sql == sql)
      #expect(error?.kind == .invalidArgument || error?.kind == .sqlite)
    }
  }

  @Test("multi-statement SQL runs through executeScript", arguments: Engine.allCases)
  func script(engine: Engine) async throws {
    try await withStore(engine: engine) { store, _ in
      let count = try await store.write { database in
        try database.executeScript(
          "INSERT INTO items(name) VALUES ('a'); INSERT INTO items(name) VALUES ('b');")
        return try database.queryOne("SELECT count(*) FROM items")?.int(0)
      }
      #expect(count == 2)
    }
  }
}
