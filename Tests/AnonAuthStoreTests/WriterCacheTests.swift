import AnonAuthTestSupport
import Foundation
import Testing

@testable import AnonAuthStore

/// The writer's page cache is `StoreOptions.writerCacheKiB`; readers keep their own
/// 16 MiB; values outside the range are refused before any file is touched.
@Suite("Writer page cache")
struct WriterCacheTests {
  @Test("the writer's cache is the option's, readers keep the default")
  func writerGetsTheOption() async throws {
    try await withStore(configure: { $0.writerCacheKiB = 65_536 }) { store, _ in
      let writer = try await store.write { db in try db.queryOne("PRAGMA cache_size")?.int(0) }
      let reader = try await store.read { db in try db.queryOne("PRAGMA cache_size")?.int(0) }
      #expect(writer == -65_536)
      #expect(reader == -StoreOptions.defaultCacheKiB)
    }
  }

  @Test("by default the writer's cache is larger than a reader's")
  func defaultIsLarger() async throws {
    try await withStore { store, _ in
      let writer = try await store.write { db in try db.queryOne("PRAGMA cache_size")?.int(0) }
      #expect(writer == -StoreOptions.defaultWriterCacheKiB)
      #expect(StoreOptions.defaultWriterCacheKiB > StoreOptions.defaultCacheKiB)
    }
  }

  @Test("a cache outside the range is refused", arguments: [0, 2_047, 16_777_217])
  func refused(_ kib: Int) throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    var options = StoreOptions(path: directory.file("store.sqlite"))
    options.writerCacheKiB = kib
    #expect(throws: StoreError.self) { try Store.open(options: options) }
    #expect(!FileManager.default.fileExists(atPath: directory.file("store.sqlite")))
  }
}
