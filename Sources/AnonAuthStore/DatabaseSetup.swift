/// The pragmas and checks a connection gets when the store opens it.
extension Database {
  /// WAL lets readers run beside the writer; `synchronous` decides what an acknowledged
  /// write survives; foreign keys are off by default in SQLite and must be asked for.
  ///
  /// On the replicated engine the node decides both (WAL, and durability by Raft's
  /// majority), and foreign keys are set when the link is made.
  func configureWriter(synchronous: StoreOptions.Synchronous, cacheKiB: Int) throws(StoreError) {
    guard connection is SQLiteConnection else { return }
    let mode = try queryOne("PRAGMA journal_mode=WAL")?.optionalString(0)
    guard mode?.lowercased() == "wal" else {
      throw StoreError(
        kind: .sqlite, message: "could not switch to WAL (journal mode is \(mode ?? "unknown"))",
        sql: "PRAGMA journal_mode=WAL")
    }
    try execute("PRAGMA synchronous=\(synchronous.rawValue)")
    try execute("PRAGMA foreign_keys=ON")
    // Every write job runs in its own savepoint, and SQLite keeps a copy of each page a
    // savepoint changes (the statement journal). In a temporary file, that is a pwrite(2)
    // per page per job; in memory, a copy.
    try execute("PRAGMA temp_store=MEMORY")
    try useLargerCache(kib: cacheKiB)
  }

  /// More page cache than SQLite's 2 MiB (16 MiB for readers, `StoreOptions.writerCacheKiB`
  /// for the writer): every sign-up touches random pages of the account and token
  /// indexes, and once the store outgrows the cache each of them is a read(2) into the
  /// OS cache. Negative means KiB.
  func useLargerCache(kib: Int = StoreOptions.defaultCacheKiB) throws(StoreError) {
    try execute("PRAGMA cache_size=-\(kib)")
  }

  /// Readers inherit WAL from the file; foreign keys matter to them only for pragmas
  /// that report on them, but the setting should not differ between connections.
  func configureReader() throws(StoreError) {
    guard connection is SQLiteConnection else { return }
    try execute("PRAGMA foreign_keys=ON")
    try useLargerCache()
  }

  /// `PRAGMA quick_check`: a damaged file is refused at open, where the error is clear,
  /// rather than failing later in the middle of a request.
  func quickCheck() throws(StoreError) {
    let sql = "PRAGMA quick_check"
    var findings: [String] = []
    for row in try query(sql) { findings.append(try row.optionalString(0) ?? "null") }
    guard findings == ["ok"] else {
      let shown = findings.prefix(5).joined(separator: "; ").split(whereSeparator: \.isNewline)
        .joined(separator: " ")
      throw StoreError(kind: .corrupt, message: "integrity check failed: \(shown)", sql: sql)
    }
  }

  /// The schema version migrations have reached (`PRAGMA user_version`).
  func userVersion() throws(StoreError) -> Int {
    try queryOne("PRAGMA user_version")?.optionalInt(0) ?? 0
  }
}
