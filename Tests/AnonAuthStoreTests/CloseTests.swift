import AnonAuthStore
import AnonAuthTestSupport
import Dispatch
import Testing

@Suite("Closing the store")
struct CloseTests {
  @Test("close finishes the writes already queued, then refuses new work")
  func closeCompletesQueuedWrites() async throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let options = StoreOptions(path: directory.file("store.sqlite"), maxBatch: 8)
    let store = try Store.open(options: options, migrations: TestSchema.all)

    let writes = Task {
      await withTaskGroup(of: Bool.self) { group in
        for index in 0..<200 {
          group.addTask { (try? await store.insertItem("queued \(index)")) != nil }
        }
        return await group.reduce(into: []) { $0.append($1) }
      }
    }
    try await Task.sleep(for: .milliseconds(1))
    await store.close()
    let results = await writes.value
    // Each write either committed before close or was refused after it: none is lost
    // half-way, and every one acknowledged is on disk.
    let acknowledged = results.filter { $0 }.count

    await #expect(throws: StoreError.self) { try await store.insertItem("late") }
    let readError = await #expect(throws: StoreError.self) { try await store.itemCount() }
    #expect(readError?.kind == .closed)
    await store.close()

    let reopened = try Store.open(options: options, migrations: TestSchema.all)
    #expect(try await reopened.itemCount() == acknowledged)
    await reopened.close()
  }

  @Test("writes queued before close all complete")
  func queuedBeforeClose() async throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let options = StoreOptions(path: directory.file("store.sqlite"), maxBatch: 4)
    let store = try Store.open(options: options, migrations: TestSchema.all)
    let first = try await HeldWriter.hold(store)
    let writes = Task {
      try await withThrowingTaskGroup(of: Void.self) { group in
        for index in 0..<50 { group.addTask { try await store.insertItem("q\(index)") } }
        try await group.waitForAll()
      }
    }
    while store.metrics.queuedWrites < 50 { try await Task.sleep(for: .milliseconds(5)) }
    async let closing: Void = store.close()
    first.release()
    try await first.finished()
    try await writes.value
    await closing
    #expect(store.metrics.writesCommitted == 51)

    let reopened = try Store.open(options: options, migrations: TestSchema.all)
    #expect(try await reopened.itemCount() == 50)
    await reopened.close()
  }
}
