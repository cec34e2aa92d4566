import AnonAuthStore
import Foundation
import Synchronization
import Testing

@Suite("Online backup")
struct BackupTests {
  @Test("a backup opens as a store holding the rows", arguments: [1, 256] as [Int32])
  func roundTrip(pagesPerStep: Int32) async throws {
    try await withStore { store, directory in
      try await store.write { database in
        for index in 0..<500 {
          try database.execute(
            "INSERT INTO items(name, data) VALUES (?, ?)",
            [.text("row \(index)"), .blob(Array(repeating: 1, count: 200))])
        }
      }
      let steps = Counter()
      let path = directory.file("backup.sqlite")
      let size = try await store.backup(to: path, pagesPerStep: pagesPerStep) { copied, total in
        #expect(copied <= total)
        steps.add()
      }
      let attributes = try FileManager.default.attributesOfItem(atPath: path)
      #expect((attributes[.size] as? NSNumber)?.uint64Value == size)
      #expect(size >= 100_000)
      #expect(steps.value >= (pagesPerStep == 1 ? 25 : 1))
      for leftover in [".partial", ".partial-journal", "-journal", "-wal"] {
        #expect(!FileManager.default.fileExists(atPath: path + leftover), "\(leftover)")
      }

      let copy = try Store.open(options: StoreOptions(path: path), migrations: TestSchema.all)
      #expect(copy.schemaVersion == 2)
      #expect(try await copy.itemCount() == 500)
      #expect(try await copy.itemNames().contains("row 499"))
      await copy.close()
    }
  }

  @Test("writes go on while a backup is taken, and the backup is consistent")
  func concurrentWrites() async throws {
    try await withStore(configure: { $0.synchronous = .normal }) { store, directory in
      for index in 0..<300 { try await store.insertItem("before \(index)") }
      let path = directory.file("backup.sqlite")
      async let backup = store.backup(to: path, pagesPerStep: 1)
      for index in 0..<100 { try await store.insertItem("during \(index)") }
      _ = try await backup

      let copy = try Store.open(options: StoreOptions(path: path), migrations: TestSchema.all)
      let count = try await copy.itemCount()
      #expect(count >= 300 && count <= 400)
      await copy.close()
      #expect(try await store.itemCount() == 400)
    }
  }

  @Test("a backup never overwrites an existing file")
  func refusesToOverwrite() async throws {
    try await withStore { store, directory in
      let path = directory.file("exists.sqlite")
      try Data("keep me".utf8).write(to: URL(fileURLWithPath: path))
      let error = await #expect(throws: StoreError.self) { try await store.backup(to: path) }
      #expect(error?.kind == .invalidArgument)
      #expect(try String(contentsOfFile: path, encoding: .utf8) == "keep me")

      let liveError = await #expect(throws: StoreError.self) {
        try await store.backup(to: store.options.path)
      }
      #expect(liveError?.kind == .invalidArgument)
    }
  }
}

/// Counts calls from any thread.
final class Counter: Sendable {
  private let count = Atomic<Int>(0)
  func add() { count.wrappingAdd(1, ordering: .relaxed) }
  var value: Int { count.load(ordering: .relaxed) }
}
