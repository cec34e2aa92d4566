import AnonAuthStore
import AnonAuthTestSupport
import Foundation
import Testing

/// SQLite decides that a closing connection is the last one by trying to lock the
/// database file; the last one checkpoints and deletes the WAL. A process that drops its
/// own locks (by closing any descriptor of the file) lets another process's close delete
/// the WAL under it, and the writes after that vanish for everyone else.
@Suite("Another process's connection")
struct ForeignCloseTests {
  @Test("a connection another process opens and closes leaves an open store's WAL in place")
  func walSurvives() async throws {
    try await withStore { store, directory in
      try await store.insertItem("before")
      let path = directory.file("store.sqlite")
      try Self.readInChildProcess(path)
      #expect(FileManager.default.fileExists(atPath: path + "-wal"), "the WAL was deleted under the store")
      try await store.insertItem("after")
      // What the store wrote after the other process closed is visible to a new reader
      // in yet another process.
      #expect(try Self.readInChildProcess(path) == 2)
    }
  }

  /// Counts the items with Python's sqlite3 module in a child process: a connection of
  /// another process, opened and closed.
  @discardableResult
  static func readInChildProcess(_ path: String) throws -> Int {
    let process = try ChildProcess(
      "/usr/bin/env",
      [
        "python3", "-c",
        "import sqlite3, sys; db = sqlite3.connect(sys.argv[1]); "
          + "print(db.execute('SELECT count(*) FROM items').fetchone()[0]); db.close()",
        path,
      ], environment: ProcessInfo.processInfo.environment)
    let text = String(decoding: process.stdout?.readDataToEndOfFile() ?? Data(), as: UTF8.self)
    process.wait()
    return try #require(Int(text.trimmingCharacters(in: .whitespacesAndNewlines)))
  }
}
