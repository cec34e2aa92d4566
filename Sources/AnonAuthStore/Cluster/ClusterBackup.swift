import AnonAuthDqlite
import Foundation

/// A backup of the replicated store: the leader's consistent copy (`DUMP`: the database
/// and its WAL), checkpointed here into one self-contained SQLite file, which opens as a
/// single-file store or seeds a new cluster. Written beside the destination and renamed
/// into place only once complete, like the single-file engine's backups.
enum ClusterBackup {
  static func copy(_ options: ClusterStoreOptions, to destination: String, busyTimeoutMs: Int32)
    throws(StoreError)
    -> UInt64
  {
    try OnlineBackup.checkDestination(destination, pagesPerStep: 1)
    let files: [(name: String, bytes: [UInt8])]
    do {
      let leader = try DqliteConnector(seeds: options.seeds, timeoutMs: max(options.timeoutMs, 60_000))
        .connectToLeader()
      defer { leader.close() }
      files = try leader.dump(options.databaseName)
    } catch {
      throw StoreError(error, sql: nil)
    }
    guard let main = files.first(where: { $0.name == options.databaseName }) else {
      throw StoreError(kind: .io, message: "the leader's dump holds no file \(options.databaseName)")
    }
    let partial = destination + ".partial"
    let wal = files.first { $0.name == options.databaseName + "-wal" }
    let leftovers = [partial, partial + "-wal", partial + "-shm"]
    for leftover in leftovers { try? FileManager.default.removeItem(atPath: leftover) }
    do throws(StoreError) {
      try write(main.bytes, to: partial)
      if let wal { try write(wal.bytes, to: partial + "-wal") }
      // Folds the WAL into the file and leaves it in rollback-journal mode: one file.
      let connection = try SQLiteConnection(path: partial, readOnly: false, busyTimeoutMs: busyTimeoutMs)
      defer { connection.close() }
      try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)", [])
      _ = try connection.query("PRAGMA journal_mode=DELETE", [])
      let check = try connection.query("PRAGMA quick_check", []).compactMap { try? $0.optionalString(0) }
      guard check == ["ok"] else {
        throw StoreError(kind: .corrupt, message: "the dumped copy failed its check: \(check.prefix(3))")
      }
    } catch {
      for leftover in leftovers { try? FileManager.default.removeItem(atPath: leftover) }
      throw error
    }
    try OnlineBackup.moveIntoPlace(partial, destination)
    let attributes = try? FileManager.default.attributesOfItem(atPath: destination)
    return (attributes?[.size] as? NSNumber)?.uint64Value ?? 0
  }

  private static func write(_ bytes: [UInt8], to path: String) throws(StoreError) {
    OwnerOnlyFile.prepare(path)
    guard
      FileManager.default.createFile(
        atPath: path, contents: Data(bytes), attributes: [.posixPermissions: 0o600])
    else { throw StoreError(kind: .io, message: "cannot write \(path)") }
  }
}
