import CSQLite
import Foundation

/// A copy of a live store through SQLite's online backup API, taken from a connection of
/// its own so that no reader is held up and the writer keeps committing.
enum OnlineBackup {
  /// Pause between steps, so that a large copy leaves the disk to the writer in between.
  static let pauseMicroseconds: UInt32 = 2_000
  /// A writer that commits between steps makes SQLite start the copy over. After this
  /// many restarts the rest is copied in one step: one read transaction, which in WAL
  /// mode does not block the writer, only delays checkpoints until it ends.
  static let restartsBeforeOneStep = 3

  /// Copies `source` to `destination` through `destination.partial`, renamed into place
  /// only once complete, so a crash never leaves a half backup under the final name.
  /// - Returns: the size in bytes of the backup file.
  static func copy(
    from source: String, to destination: String, pagesPerStep: Int32, busyTimeoutMs: Int32,
    progress: (@Sendable (Int, Int) -> Void)?
  ) throws(StoreError) -> UInt64 {
    try checkDestination(destination, pagesPerStep: pagesPerStep)
    let partial = destination + ".partial"
    for leftover in [partial, partial + "-journal"] { try? FileManager.default.removeItem(atPath: leftover) }
    do throws(StoreError) {
      let reader = try SQLiteConnection(path: source, readOnly: true, busyTimeoutMs: busyTimeoutMs)
      defer { reader.close() }
      let target = try SQLiteConnection(path: partial, readOnly: false, busyTimeoutMs: busyTimeoutMs)
      defer { target.close() }
      try copyPages(
        from: reader, to: target, pagesPerStep: pagesPerStep, busyTimeoutMs: busyTimeoutMs,
        progress: progress)
    } catch {
      try? FileManager.default.removeItem(atPath: partial)
      throw error
    }
    try moveIntoPlace(partial, destination)
    let attributes = try? FileManager.default.attributesOfItem(atPath: destination)
    return (attributes?[.size] as? NSNumber)?.uint64Value ?? 0
  }

  private static func copyPages(
    from reader: SQLiteConnection, to target: SQLiteConnection, pagesPerStep: Int32, busyTimeoutMs: Int32,
    progress: (@Sendable (Int, Int) -> Void)?
  ) throws(StoreError) {
    guard let backup = sqlite3_backup_init(target.handle, "main", reader.handle, "main") else {
      throw StoreError(code: sqlite3_errcode(target.handle), handle: target.handle, sql: nil)
    }
    var step = pagesPerStep
    var restarts = 0
    var copiedBefore = 0
    var busySince: UInt64?
    while true {
      let code = sqlite3_backup_step(backup, step)
      let total = Int(sqlite3_backup_pagecount(backup))
      let copied = total - Int(sqlite3_backup_remaining(backup))
      progress?(copied, total)
      if code == SQLITE_DONE { break }
      if code == SQLITE_OK {
        busySince = nil
        if copied < copiedBefore {
          restarts += 1
          if restarts >= restartsBeforeOneStep { step = -1 }
        }
        copiedBefore = copied
      } else if code == SQLITE_BUSY || code == SQLITE_LOCKED, !busyTooLong(since: &busySince, busyTimeoutMs) {
        // Locked for now: try again after the pause, within the busy timeout.
      } else {
        sqlite3_backup_finish(backup)
        throw StoreError(code: code, handle: target.handle, sql: nil)
      }
      usleep(pauseMicroseconds)
    }
    let code = sqlite3_backup_finish(backup)
    if code != SQLITE_OK { throw StoreError(code: code, handle: target.handle, sql: nil) }
  }

  /// Starts the clock at the first BUSY of a run; true once the run outlasts the timeout.
  private static func busyTooLong(since start: inout UInt64?, _ busyTimeoutMs: Int32) -> Bool {
    let now = DispatchTime.now().uptimeNanoseconds
    let since = start ?? now
    start = since
    return now - since > UInt64(busyTimeoutMs) * 1_000_000
  }

  /// Refuses to overwrite: an existing file could be a live store, and a stale `-wal`
  /// beside a new file would be replayed into it.
  static func checkDestination(
    _ destination: String, pagesPerStep: Int32
  ) throws(StoreError) {
    guard pagesPerStep > 0 else {
      throw StoreError(kind: .invalidArgument, message: "pagesPerStep must be positive")
    }
    for path in [destination, destination + "-wal"] where FileManager.default.fileExists(atPath: path) {
      throw StoreError(kind: .invalidArgument, message: "backup destination exists: \(path)")
    }
  }

  static func moveIntoPlace(_ partial: String, _ destination: String) throws(StoreError) {
    guard rename(partial, destination) == 0 else {
      let reason = String(cString: strerror(errno))
      try? FileManager.default.removeItem(atPath: partial)
      throw StoreError(kind: .io, message: "cannot rename backup into \(destination): \(reason)")
    }
    // The rename is durable only once the directory entry is on disk.
    let directory = (destination as NSString).deletingLastPathComponent
    let descriptor = open(directory.isEmpty ? "." : directory, O_RDONLY)
    if descriptor >= 0 {
      fsync(descriptor)
      close(descriptor)
    }
  }
}
