import AnonAuthStore
import Testing

@Suite("Readers")
struct ReaderTests {
  @Test("a read after an acknowledged write sees it", arguments: Engine.allCases)
  func seesCommittedData(engine: Engine) async throws {
    try await withStore(engine: engine) { store, _ in
      for index in 0..<20 {
        try await store.insertItem("n\(index)")
        #expect(try await store.itemCount() == index + 1)
      }
    }
  }

  @Test(
    "a write through a reader is refused",
    arguments: Engine.allCases,
    [
      "INSERT INTO items(name) VALUES ('x')", "CREATE TABLE other(x)", "DELETE FROM items",
    ])
  func readersCannotWrite(engine: Engine, _ sql: String) async throws {
    try await withStore(engine: engine) { store, _ in
      try await store.insertItem("kept")
      let error = await #expect(throws: StoreError.self) {
        try await store.read { database in try database.execute(sql) }
      }
      #expect(error?.kind == .readOnly)
      #expect(try await store.read { database in database.isReadOnly })
      #expect(try await store.itemNames() == ["kept"])
    }
  }

  @Test(
    "many concurrent reads, more than there are readers, all complete", arguments: Engine.allCases, [1, 2, 4])
  func concurrentReads(engine: Engine, readerCount: Int) async throws {
    try await withStore(engine: engine, configure: { $0.readerCount = readerCount }) { store, _ in
      for index in 0..<10 { try await store.insertItem("r\(index)") }
      let counts = try await withThrowingTaskGroup(of: Int.self) { group in
        for _ in 0..<200 { group.addTask { try await store.itemCount() } }
        return try await group.reduce(into: []) { $0.append($1) }
      }
      #expect(counts == Array(repeating: 10, count: 200))
    }
  }

  @Test("an error thrown by a read job reaches the caller and the reader goes on", arguments: Engine.allCases)
  func readJobError(engine: Engine) async throws {
    try await withStore(engine: engine) { store, _ in
      await #expect(throws: JobFailed(name: "read")) {
        try await store.read { _ in throw JobFailed(name: "read") }
      }
      let count = try await store.itemCount()
      #expect(count == 0)
    }
  }
}
