import AnonAuthTestSupport
import Foundation
import Testing

@testable import AnonAuthStore

@Suite("Background checkpoints")
struct CheckpointTests {
  @Test("the checkpointer thread, not the writer, copies the WAL back; the WAL stays bounded")
  func backgroundCheckpoints() async throws {
    try await withStore { store, directory in
      // About 2,400 pages of 4 KiB: well past the 1,000-page threshold, twice over.
      let blob = SQLValue.blob([UInt8](repeating: 0xA5, count: 3_000))
      for batch in 0..<40 {
        try await store.write { db in
          for n in 0..<80 {
            try db.execute(
              "INSERT INTO items(name, data) VALUES (?, ?)", [.text("item-\(batch)-\(n)"), blob])
          }
        }
      }
      let deadline = Date().addingTimeInterval(10)
      while store.metrics.checkpoints == 0, Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
      #expect(store.metrics.checkpoints > 0)
      #expect(store.metrics.limitCheckpoints == 0, "the WAL never reached the writer's limit")

      // The WAL is reused once checkpointed: more writes do not grow it towards the
      // writer's limit (8,000 pages), and the writer finished background passes itself.
      for batch in 40..<120 {
        try await store.write { db in
          for n in 0..<80 {
            try db.execute(
              "INSERT INTO items(name, data) VALUES (?, ?)", [.text("item-\(batch)-\(n)"), blob])
          }
        }
      }
      let wal = try FileManager.default.attributesOfItem(atPath: directory.file("store.sqlite-wal"))
      let walBytes = (wal[.size] as? NSNumber)?.intValue ?? -1
      #expect(walBytes > 0 && walBytes < 4_000 * (4_096 + 24))
      #expect(store.metrics.writerCheckpoints > 0)
      #expect(store.metrics.limitCheckpoints == 0)
      #expect(try await store.itemCount() == 120 * 80)
    }
  }

  @Test(
    "below the threshold nothing wakes; after a background pass, or past the limit, the writer checkpoints")
  func writerLimit() async throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let connection = Database(
      try SQLiteConnection(path: directory.file("c.sqlite"), readOnly: false, busyTimeoutMs: 1_000))
    let checkpointer = Checkpointer(database: connection, threshold: 10, writerLimit: 100)
    // The requests come before the background thread starts: once started it may finish
    // its pass at any moment, and "not twice" is a claim about a pass still pending (it
    // failed whenever the thread was quicker than the next line).
    #expect(!checkpointer.committed(walPages: 9), "below the threshold: nothing")
    #expect(!checkpointer.committed(walPages: 50), "past it: the background thread is asked")
    #expect(!checkpointer.committed(walPages: 60), "asked already: not twice")
    checkpointer.start(name: "test-checkpoint")
    let deadline = Date().addingTimeInterval(10)
    while checkpointer.passes.load(ordering: .relaxed) == 0, Date() < deadline {
      try await Task.sleep(for: .milliseconds(10))
    }
    #expect(checkpointer.passes.load(ordering: .relaxed) == 1)
    #expect(checkpointer.committed(walPages: 70), "after a background pass the writer finishes it")
    #expect(checkpointer.writerPasses.load(ordering: .relaxed) == 1)
    #expect(checkpointer.committed(walPages: 100), "past the limit the writer always checkpoints")
    #expect(checkpointer.limitPasses.load(ordering: .relaxed) == 1)
    await withCheckedContinuation { continuation in checkpointer.close { continuation.resume() } }
    // Closed: a request is remembered by nobody, and a second close returns at once.
    #expect(!checkpointer.committed(walPages: 50))
    await withCheckedContinuation { continuation in checkpointer.close { continuation.resume() } }
  }
}
