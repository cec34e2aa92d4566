import AnonAuthStore
import AnonAuthTestSupport
import Foundation
import Testing

/// The store's files hold every account: they are the owner's alone, even when the
/// process's umask would let others read them.
@Suite("Store file modes")
struct FileModeTests {
  @Test("an existing store file open to others is made 0600, and so are its WAL and shared memory")
  func existingFileTightened() async throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = directory.file("store.sqlite")
    #expect(
      FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o644]))
    let store = try Store.open(options: StoreOptions(path: path), migrations: TestSchema.all)
    try await store.write {
      try $0.execute("INSERT INTO items(name, data) VALUES (?, ?)", [.text("a"), .blob([1])])
    }
    #expect(try fileMode(path) == 0o600)
    for suffix in ["-wal", "-shm"] where FileManager.default.fileExists(atPath: path + suffix) {
      #expect(try fileMode(path + suffix) & 0o077 == 0, "\(suffix)")
    }
    await store.close()
  }

  @Test("a new store and a backup are 0600")
  func newFilesOwnerOnly() async throws {
    try await withStore { store, directory in
      #expect(try fileMode(directory.file("store.sqlite")) == 0o600)
      let backup = directory.file("backup.sqlite")
      _ = try await store.backup(to: backup)
      #expect(try fileMode(backup) == 0o600)
    }
  }
}
