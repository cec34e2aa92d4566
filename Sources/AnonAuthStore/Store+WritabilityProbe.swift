import Dispatch
import Glibc

extension Store {
  /// After a failed transaction (disk full, read-only file), tries one small real write,
  /// so that readiness comes back by itself once space returns. Without it, an unready
  /// instance gets no traffic, so no write would ever show that it recovered.
  ///
  /// The probe needs `probeHeadroomBytes` free on the store's file system first (a write
  /// of one page can fit where a sign-up's several do not, and readiness would flap), then
  /// sets `user_version` to the value it has: that dirties a page and needs room in the
  /// WAL like any write, and changes nothing. At most one probe a second runs; the others
  /// return the current state.
  /// - Returns: whether the store takes writes now.
  @discardableResult
  public func probeWritability() async -> Bool {
    if isWritable { return true }
    if counters.failedIntegrity.load(ordering: .relaxed) { return false }
    let now = DispatchTime.now().uptimeNanoseconds
    let last = counters.lastProbeNanos.load(ordering: .relaxed)
    guard now &- last >= 1_000_000_000,
      counters.lastProbeNanos.compareExchange(expected: last, desired: now, ordering: .relaxed).exchanged
    else { return isWritable }
    guard freeBytes() ?? UInt64.max >= Self.probeHeadroomBytes else { return false }
    do {
      try await write { database in
        let version = try database.queryOne("PRAGMA user_version")?.int64(0) ?? 0
        try database.execute("PRAGMA user_version = \(version)")
      }
    } catch {
      return false
    }
    return isWritable
  }

  /// Free space the probe wants before it tries a write.
  public static let probeHeadroomBytes: UInt64 = 4 * 1024 * 1024

  /// Bytes an unprivileged writer can still use on the database's file system; nil when
  /// it cannot be told (the probe then relies on its write alone).
  func freeBytes() -> UInt64? { Self.freeBytes(forStoreAt: options.path) }

  /// The same for a store not open (yet): the daemon names a full file system when the
  /// store cannot open, which SQLite reports only as an I/O error (it cannot create the
  /// WAL's shared-memory index).
  public static func freeBytes(forStoreAt path: String) -> UInt64? {
    let directory = path.split(separator: "/", omittingEmptySubsequences: false).dropLast()
      .joined(separator: "/")
    var info = statvfs()
    guard statvfs(directory.isEmpty ? "." : directory, &info) == 0 else { return nil }
    return UInt64(info.f_bavail).multipliedReportingOverflow(by: UInt64(info.f_frsize)).partialValue
  }
}
