import AnonAuthStore
import AnonAuthTestSupport
import Foundation
import Testing

/// A store that runs out of room: SQLite's `max_page_count` on the writer connection
/// stands in for a full disk (both are SQLITE_FULL).
@Suite struct FullStoreTests {
  @Test func aFullStoreFailsWritesAsFullKeepsReadsAndAProbeBringsItBack() async throws {
    try await withStore { store, _ in
      try await store.insertItem("before")
      let pages = try await store.write { database in
        try database.queryOne("PRAGMA page_count")?.int64(0) ?? 0
      }
      try await store.write { database in try database.execute("PRAGMA max_page_count = \(pages)") }
      let big = [UInt8](repeating: 7, count: 64 * 1024)
      await #expect {
        try await store.write { database in
          try database.execute("INSERT INTO items(name, data) VALUES ('big', ?)", [.blob(big)])
        }
      } throws: { error in
        (error as? StoreError)?.kind == .full
      }
      #expect(!store.isWritable)
      #expect(try await store.itemNames() == ["before"])  // nothing changed, reads work

      // The probe's write needs no new page, so it goes through (the file system has
      // far more than the probe's headroom): the store says it is writable again without
      // any other write.
      #expect(await store.probeWritability())
      #expect(store.isWritable)
    }
  }
}

/// A store opened without the check at open (as the daemon does, to start fast) is
/// checked while it serves; damage found stops every later write.
@Suite struct BackgroundIntegrityTests {
  @Test func damageFoundAfterOpenRefusesWritesAndMakesTheStoreUnwritable() async throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    var options = StoreOptions(path: directory.file("store.sqlite"))
    let store = try Store.open(options: options, migrations: TestSchema.all)
    for index in 0..<200 { try await store.insertItem("row \(index)") }
    await store.close()
    let handle = try #require(FileHandle(forWritingAtPath: options.path))
    try handle.seek(toOffset: 8192)
    try handle.write(contentsOf: Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 13) }))
    try handle.close()

    options.checkIntegrityAtOpen = false
    let damaged = try Store.open(options: options, migrations: TestSchema.all)
    #expect(damaged.isWritable)
    await #expect {
      try await damaged.verifyIntegrity()
    } throws: { error in
      (error as? StoreError)?.kind == .corrupt
    }
    #expect(!damaged.isWritable)
    #expect(await !damaged.probeWritability())
    await #expect {
      try await damaged.insertItem("after")
    } throws: { error in
      (error as? StoreError)?.kind == .corrupt
    }
    await damaged.close()
  }

  @Test func aSoundStorePassesTheCheckAndStaysWritable() async throws {
    try await withStore(configure: { $0.checkIntegrityAtOpen = false }) { store, _ in
      try await store.insertItem("one")
      try await store.verifyIntegrity()
      #expect(store.isWritable)
      try await store.insertItem("two")
    }
  }
}
