import Dispatch
import Testing

@testable import AnonAuthStore

/// A write whose task is cancelled (its call expired, its connection closed) while it
/// waits for the writer is dropped: it never runs, changes nothing and is counted; a
/// write the writer has already taken runs and commits whatever happens to its task.
@Suite("Cancelled writes")
struct CancelledWriteTests {
  @Test("a write cancelled while queued never runs, changes nothing and is counted")
  func droppedWhileQueued() async throws {
    try await withStore { store, _ in
      // Holds the writer so that the next job waits in its queue.
      let writer = try await HeldWriter.hold(store)
      let ran = Flag()
      let queued = Task {
        try await store.write { database in
          ran.set()
          try database.execute("INSERT INTO items(name) VALUES ('dropped')")
        }
      }
      try await waitUntil { store.metrics.queuedWrites == 1 }
      queued.cancel()
      writer.release()
      try await writer.finished()
      await #expect(throws: CancellationError.self) { try await queued.value }
      #expect(!ran.isSet)
      #expect(try await store.itemNames().isEmpty)
      #expect(store.metrics.writesDropped == 1)
      // The writer goes on: the next write commits.
      try await store.insertItem("after")
      #expect(try await store.itemNames() == ["after"])
    }
  }

  @Test("a write already taken by the writer commits even when its task is cancelled")
  func takenWriteCompletes() async throws {
    try await withStore { store, _ in
      let release = DispatchSemaphore(value: 0)
      let running = Flag()
      let write = Task { () throws -> Int in
        try await store.write { database in
          running.set()
          release.wait()
          try database.execute("INSERT INTO items(name) VALUES ('kept')")
          return 7
        }
      }
      try await waitUntil { running.isSet }
      write.cancel()
      release.signal()
      #expect(try await write.value == 7)
      #expect(try await store.itemNames() == ["kept"])
      #expect(store.metrics.writesDropped == 0)
    }
  }

  @Test("a task cancelled before it writes is refused at once and counted")
  func cancelledBeforeSubmitting() async throws {
    try await withStore { store, _ throws in
      let write = Task {
        withUnsafeCurrentTask { $0?.cancel() }
        try await store.insertItem("never")
      }
      await #expect(throws: CancellationError.self) { try await write.value }
      #expect(try await store.itemNames().isEmpty)
      #expect(store.metrics.writesDropped == 1)
    }
  }

  func waitUntil(_ condition: @Sendable () -> Bool) async throws {
    for _ in 0..<1000 {
      if condition() { return }
      try await Task.sleep(for: .milliseconds(10))
    }
    Issue.record("condition not met in time")
  }
}
