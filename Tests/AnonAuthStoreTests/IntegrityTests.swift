import AnonAuthStore
import AnonAuthTestSupport
import Foundation
import Testing

@Suite("Integrity checks and options")
struct IntegrityTests {
  @Test("a fresh store passes quick_check and runs in WAL with the chosen synchronous")
  func freshStore() async throws {
    for synchronous in [StoreOptions.Synchronous.full, .normal] {
      try await withStore(configure: { $0.synchronous = synchronous }) { store, _ in
        let (check, mode, sync, foreignKeys, timeout) = try await store.write { database in
          (
            try database.queryOne("PRAGMA quick_check")?.string(0),
            try database.queryOne("PRAGMA journal_mode")?.string(0),
            try database.queryOne("PRAGMA synchronous")?.int(0),
            try database.queryOne("PRAGMA foreign_keys")?.int(0),
            try database.queryOne("PRAGMA busy_timeout")?.int(0)
          )
        }
        #expect(check == "ok")
        #expect(mode == "wal")
        #expect(sync == (synchronous == .full ? 2 : 1))
        #expect(foreignKeys == 1)
        #expect(timeout == 5000)
        let readerTimeout = try await store.read { database in
          try database.queryOne("PRAGMA busy_timeout")?.int(0)
        }
        #expect(readerTimeout == 5000)
      }
    }
  }

  @Test(
    "garbage written over a store file makes open fail with a clear error",
    arguments: [0, 4096, 8192])
  func corruptFile(offset: Int) async throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let options = StoreOptions(path: directory.file("store.sqlite"))
    let store = try Store.open(options: options, migrations: TestSchema.all)
    try await store.write { database in
      for index in 0..<200 {
        try database.execute(
          "INSERT INTO items(name, data) VALUES (?, ?)",
          [.text("row \(index)"), .blob(Array(repeating: UInt8(index % 256), count: 100))])
      }
    }
    await store.close()

    let handle = try #require(FileHandle(forWritingAtPath: options.path))
    try handle.seek(toOffset: UInt64(offset))
    try handle.write(contentsOf: Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 13) }))
    try handle.close()

    let error = #expect(throws: StoreError.self) {
      try Store.open(options: options, migrations: TestSchema.all)
    }
    #expect(error?.kind == .corrupt, "\(String(describing: error))")
    #expect(error?.message.contains(options.path) == true)
    #expect(error?.description.contains("\n") == false)
  }

  @Test(
    "options that cannot work are refused before any file is made",
    arguments: [
      { (o: inout StoreOptions) in o.readerCount = 0 },
      { o in o.maxBatch = 0 },
      { o in o.busyTimeoutMs = -1 },
      { o in o.path = ":memory:" },
      { o in o.path = "" },
    ] as [@Sendable (inout StoreOptions) -> Void])
  func badOptions(_ change: @Sendable (inout StoreOptions) -> Void) throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    var options = StoreOptions(path: directory.file("store.sqlite"))
    change(&options)
    let error = #expect(throws: StoreError.self) { try Store.open(options: options) }
    #expect(error?.kind == .invalidArgument)
    #expect(!FileManager.default.fileExists(atPath: directory.file("store.sqlite")))
  }

  @Test("a directory that does not exist fails to open with SQLite's reason")
  func missingDirectory() throws {
    let error = #expect(throws: StoreError.self) {
      try Store.open(options: StoreOptions(path: "/nonexistent-anonauth/dir/store.sqlite"))
    }
    #expect(error?.resultCode != 0)
    #expect(error?.message.contains("/nonexistent-anonauth") == true)
  }
}
