import AnonAuthDqlite

/// Moves a single-file store onto a new cluster: every row of every table, copied in
/// foreign-key order (parents first) in transactions of `rowsPerTransaction`, streamed
/// from the file so that a store of millions of accounts never sits in memory.
///
/// Runs once, when node 1 bootstraps next to an existing `anonauth.db`, before the daemon
/// serves or writes anything of its own. Both schemas are brought to the same version
/// first; rows are written with INSERT OR REPLACE, so the file wins over anything the
/// new cluster's migrations made.
public enum ClusterSeed {
  public static let rowsPerTransaction = 500

  /// - Returns: the rows copied.
  /// - Throws: `StoreError`; the cluster then holds part of the file and must be started
  ///   over (the daemon says how).
  public static func copy(
    from path: String, to options: ClusterStoreOptions, migrations: [Migration],
    busyTimeoutMs: Int32 = StoreOptions.defaultBusyTimeoutMs,
    progress: (String, Int) -> Void = { _, _ in }
  ) throws(StoreError) -> Int {
    let source = Database(try SQLiteConnection(path: path, readOnly: false, busyTimeoutMs: busyTimeoutMs))
    defer { source.close() }
    let sourceVersion = try Migrator.migrate(source, to: migrations)
    let target = Database(ClusterConnection(options: options, readOnly: false, busyTimeoutMs: busyTimeoutMs))
    defer { target.close() }
    let targetVersion = try Migrator.migrate(target, to: migrations)
    guard sourceVersion == targetVersion else {
      throw StoreError(
        kind: .invalidArgument,
        message: "schema versions differ: file \(sourceVersion), cluster \(targetVersion)")
    }
    var copied = 0
    for table in try tablesInForeignKeyOrder(source) where !derivedTables.contains(table) {
      let columns = try strings(source, "SELECT name FROM pragma_table_info(?)", [.text(table)])
      let quoted = columns.map { "\"\($0)\"" }.joined(separator: ", ")
      let insert =
        "INSERT OR REPLACE INTO \"\(table)\" (\(quoted)) VALUES (\(Array(repeating: "?", count: columns.count).joined(separator: ", ")))"
      var pending: [Row] = []
      var tableRows = 0
      func flush() throws(StoreError) {
        guard !pending.isEmpty else { return }
        try target.execute("BEGIN IMMEDIATE")
        do throws(StoreError) {
          for row in pending { try target.execute(insert, row.values) }
          try target.execute("COMMIT")
        } catch {
          if target.isInTransaction { try? target.execute("ROLLBACK") }
          throw error
        }
        tableRows += pending.count
        pending.removeAll(keepingCapacity: true)
        progress(table, tableRows)
      }
      do {
        try source.forEach("SELECT \(quoted) FROM \"\(table)\"") { row in
          pending.append(row)
          if pending.count >= rowsPerTransaction { try flush() }
        }
        try flush()
      } catch let error as StoreError {
        throw error
      } catch {
        throw StoreError(kind: .sqlite, message: "copying \(table): \(error)")
      }
      copied += tableRows
    }
    try target.execute("BEGIN IMMEDIATE")
    do throws(StoreError) {
      try AccountListRepository.recount(target)
      try target.execute("COMMIT")
    } catch {
      if target.isInTransaction { try? target.execute("ROLLBACK") }
      throw error
    }
    return copied
  }

  /// Tables triggers fill as the others' rows arrive: copying them too would count twice.
  /// They are made again from the copied rows at the end.
  static let derivedTables: Set<String> = ["account_counts"]

  /// Every table of the schema, each after the tables its foreign keys point to.
  static func tablesInForeignKeyOrder(_ database: Database) throws(StoreError) -> [String] {
    let tables = try strings(
      database,
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
    var parents: [String: Set<String>] = [:]
    for table in tables {
      let referenced = try strings(
        database, "SELECT \"table\" FROM pragma_foreign_key_list(?)", [.text(table)])
      parents[table] = Set(referenced).subtracting([table])
    }
    var ordered: [String] = []
    var placed: Set<String> = []
    while ordered.count < tables.count {
      guard
        let next = tables.first(where: { !placed.contains($0) && (parents[$0] ?? []).isSubset(of: placed) })
      else {
        throw StoreError(kind: .invalidArgument, message: "the schema's foreign keys form a cycle")
      }
      ordered.append(next)
      placed.insert(next)
    }
    return ordered
  }

  private static func strings(
    _ database: Database, _ sql: String, _ arguments: [SQLValue] = []
  ) throws(StoreError) -> [String] {
    var values: [String] = []
    for row in try database.query(sql, arguments) { values.append(try row.string(0)) }
    return values
  }
}
