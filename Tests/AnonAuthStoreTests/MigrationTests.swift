import AnonAuthStore
import AnonAuthTestSupport
import Testing

@Suite("Migrations")
struct MigrationTests {
  @Test("an older store is upgraded and keeps its data")
  func upgrade() async throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let options = StoreOptions(path: directory.file("store.sqlite"))

    let old = try Store.open(options: options, migrations: [TestSchema.items])
    #expect(old.schemaVersion == 1)
    try await old.insertItem("from v1")
    await old.close()

    let new = try Store.open(options: options, migrations: [TestSchema.items, TestSchema.tags])
    #expect(new.schemaVersion == 2)
    #expect(try await new.itemNames() == ["from v1"])
    try await new.write { database in
      try database.execute("UPDATE items SET note = 'added in v2'")
      try database.execute("INSERT INTO tags(item_id, tag) SELECT id, 'v2' FROM items")
    }
    let version = try await new.read { database in try database.queryOne("PRAGMA user_version")?.int(0) }
    #expect(version == 2)
    await new.close()
  }

  @Test("a store newer than the build is refused with a clear error")
  func newerRefused() async throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let options = StoreOptions(path: directory.file("store.sqlite"))
    try await Store.open(options: options, migrations: TestSchema.all).close()

    let error = #expect(throws: StoreError.self) {
      try Store.open(options: options, migrations: [TestSchema.items])
    }
    #expect(error?.kind == .schemaTooNew)
    #expect(error?.message.contains("schema version 2") == true)
    #expect(error?.message.contains("(1)") == true)

    // The file was not touched: the newer build still opens it.
    let again = try Store.open(options: options, migrations: TestSchema.all)
    #expect(again.schemaVersion == 2)
    await again.close()
  }

  @Test("a failing migration rolls back, leaving the store at the previous version")
  func failingMigration() async throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let options = StoreOptions(path: directory.file("store.sqlite"))
    try await Store.open(options: options, migrations: [TestSchema.items]).close()

    let broken = Migration(version: 2, sql: "CREATE TABLE half(x); INSERT INTO missing VALUES (1);")
    let error = #expect(throws: StoreError.self) {
      try Store.open(options: options, migrations: [TestSchema.items, broken])
    }
    #expect(error?.kind == .migrationFailed)
    #expect(error?.message.contains("migration 2") == true)

    let store = try Store.open(options: options, migrations: [TestSchema.items])
    #expect(store.schemaVersion == 1)
    let tables = try await store.read { database in
      try database.query("SELECT name FROM sqlite_master WHERE type = 'table'").map { try $0.string(0) }
    }
    #expect(tables == ["items"])
    await store.close()
  }

  @Test(
    "migration lists out of order are refused",
    arguments: [
      [Migration(version: 2, sql: ""), Migration(version: 1, sql: "")],
      [Migration(version: 1, sql: ""), Migration(version: 1, sql: "")],
      [Migration(version: 0, sql: "")],
    ])
  func badLists(_ migrations: [Migration]) throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let error = #expect(throws: StoreError.self) {
      try Store.open(options: StoreOptions(path: directory.file("s.sqlite")), migrations: migrations)
    }
    #expect(error?.kind == .invalidArgument)
  }
}
