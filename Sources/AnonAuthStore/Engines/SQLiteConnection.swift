import CSQLite

/// One connection to the single-file store, opened `SQLITE_OPEN_NOMUTEX` and used by one
/// thread at a time: the store's writer thread or one reader's serial queue.
///
/// Statements are prepared once per SQL string (`SQLITE_PREPARE_PERSISTENT`) and kept, so
/// the hot queries of a server skip the parser after their first use.
final class SQLiteConnection: SQLConnection {
  let handle: OpaquePointer
  let path: String
  /// True for reader connections: SQLite itself refuses their writes.
  let isReadOnly: Bool
  private var cache: [String: Statement] = [:]
  private var isClosed = false
  /// How many statements this connection has compiled: lets tests prove cache reuse.
  private(set) var statementsPrepared = 0
  var pipelineTag = 0
  private var pipelineFailure: PipelineFailure?

  /// Past this many distinct SQL strings the cache starts over: SQL built at run time
  /// (an IN list of varying length) must not grow it without bound.
  static let cacheLimit = 256

  /// - Throws: `StoreError` when the file cannot be opened.
  init(path: String, readOnly: Bool, busyTimeoutMs: Int32) throws(StoreError) {
    var connection: OpaquePointer?
    if !readOnly { OwnerOnlyFile.prepare(path) }
    let access = readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
    let code = sqlite3_open_v2(path, &connection, access | SQLITE_OPEN_NOMUTEX, nil)
    guard code == SQLITE_OK, let connection else {
      let error = StoreError(code: code, handle: connection, sql: nil)
      // SQLite allocates a handle even when opening fails; it must still be closed.
      sqlite3_close_v2(connection)
      throw error
    }
    handle = connection
    self.path = path
    isReadOnly = readOnly
    sqlite3_extended_result_codes(connection, 1)
    sqlite3_busy_timeout(connection, busyTimeoutMs)
  }

  /// Only reached when the last reference goes, so no other thread is using the handle.
  deinit { close() }

  /// What `onWALCommit` installed, kept alive for as long as SQLite may call it.
  private var walHook: WALHook?

  /// Replaces SQLite's automatic checkpoint: after each commit `body` gets the WAL's size
  /// in pages, on this connection's thread; when it returns true, this connection runs
  /// a PASSIVE checkpoint itself, there and then (what the automatic one would do).
  func onWALCommit(_ body: @escaping (Int32) -> Bool) {
    let hook = WALHook(body)
    walHook = hook
    sqlite3_wal_hook(
      handle,
      { context, db, _, pages in
        guard let context, let db else { return SQLITE_OK }
        if Unmanaged<WALHook>.fromOpaque(context).takeUnretainedValue().body(pages) {
          sqlite3_wal_checkpoint_v2(db, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
        }
        return SQLITE_OK
      }, Unmanaged.passUnretained(hook).toOpaque())
  }

  /// Finalizes every cached statement, then closes the connection. Idempotent.
  func close() {
    guard !isClosed else { return }
    isClosed = true
    for statement in cache.values { statement.finalize() }
    cache.removeAll()
    sqlite3_close_v2(handle)
  }

  // MARK: Running SQL

  /// Runs one statement, discarding any rows.
  /// - Throws: `StoreError`; `isUniqueViolation` tells a duplicate key from other failures.
  func execute(_ sql: String, _ arguments: [SQLValue] = []) throws(StoreError) {
    try withStatement(sql, arguments) { statement throws(StoreError) in
      while try statement.step() {}
    }
  }

  /// Runs one statement and returns all its rows.
  func query(_ sql: String, _ arguments: [SQLValue] = []) throws(StoreError) -> [Row] {
    try withStatement(sql, arguments) { statement throws(StoreError) in
      var rows: [Row] = []
      while try statement.step() { rows.append(statement.row()) }
      return rows
    }
  }

  /// The first row, or nil; the rest are never read.
  func queryOne(_ sql: String, _ arguments: [SQLValue] = []) throws(StoreError) -> Row? {
    try withStatement(sql, arguments) { statement throws(StoreError) in
      try statement.step() ? statement.row() : nil
    }
  }

  /// Streams rows to `body` one at a time, so that a large result never sits in memory.
  /// - Throws: a `StoreError`, or whatever `body` throws (which stops the scan).
  func forEach(
    _ sql: String, _ arguments: [SQLValue] = [], body: (Row) throws -> Void
  ) throws {
    var bodyError: (any Error)?
    try withStatement(sql, arguments) { statement throws(StoreError) in
      while try statement.step() {
        do { try body(statement.row()) } catch {
          bodyError = error
          return
        }
      }
    }
    if let bodyError { throw bodyError }
  }

  /// Each statement prepared once and cached, as `execute` does.
  /// Nothing to pipeline on one file: it runs at once. An expectation not met is kept for
  /// the writer, which fails the job at its end, as the replicated engine does.
  func executePipelined(_ sql: String, _ arguments: [SQLValue], expecting: PipelineExpectation?)
    throws(StoreError)
  {
    try execute(sql, arguments)
    if let expecting, changes != expecting.changes, pipelineFailure == nil {
      pipelineFailure = PipelineFailure(tag: pipelineTag, error: expecting.failure())
    }
  }

  func queryPipelined(_ sql: String, _ arguments: [SQLValue]) throws(StoreError) -> PipelinedRows {
    PipelinedRows(try query(sql, arguments))
  }

  func executeControlPipelined(_ control: String) throws(StoreError) {
    try executeControl([control])
  }

  func takePipelineFailure() -> PipelineFailure? {
    defer { pipelineFailure = nil }
    return pipelineFailure
  }

  func settle() throws(StoreError) {}

  func settle(thenExecuting control: String) throws(StoreError) {
    try executeControl([control])
  }

  var pipelinesStatements: Bool { false }

  var roundTrips: Int { 0 }

  var requestsSent: Int { 0 }

  func executeControl(_ statements: [String]) throws(StoreError) {
    for statement in statements { try execute(statement, []) }
  }

  /// Runs SQL that may hold several statements (migrations), through `sqlite3_exec`.
  /// Nothing is cached and no arguments can be bound: not for values from input.
  func executeScript(_ sql: String) throws(StoreError) {
    try checkOpen(sql)
    var errorMessage: UnsafeMutablePointer<CChar>?
    let code = sqlite3_exec(handle, sql, nil, nil, &errorMessage)
    guard code == SQLITE_OK else {
      let message = errorMessage.map { String(cString: $0) }
      sqlite3_free(errorMessage)
      throw StoreError(
        code: code, extendedCode: sqlite3_extended_errcode(handle), message: message, sql: sql)
    }
  }

  /// Rows changed by the last INSERT, UPDATE or DELETE on this connection.
  var changes: Int { Int(sqlite3_changes64(handle)) }

  /// The rowid of the last successful INSERT on this connection.
  var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }

  /// False when SQLite is in autocommit mode: after an error that made it roll back the
  /// whole transaction, the writer must not go on as if earlier writes were pending.
  var isInTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

  /// True while the transaction holds a deferred foreign-key violation that COMMIT would
  /// reject: the writer checks it after each job, so one job cannot fail its whole batch.
  var hasDeferredForeignKeyViolations: Bool {
    var current: Int32 = 0
    var highwater: Int32 = 0
    sqlite3_db_status(handle, SQLITE_DBSTATUS_DEFERRED_FKS, &current, &highwater, 0)
    return current > 0
  }

  /// Makes every COMMIT on this connection fail (SQLite turns it into a rollback) until
  /// called with false: the one way to test the writer's handling of a failed COMMIT.
  func rejectCommits(_ reject: Bool) {
    if reject {
      sqlite3_commit_hook(handle, { _ in 1 }, nil)
    } else {
      sqlite3_commit_hook(handle, nil, nil)
    }
  }

  // MARK: Statements

  private func withStatement<Result>(
    _ sql: String, _ arguments: [SQLValue], _ body: (Statement) throws(StoreError) -> Result
  ) throws(StoreError) -> Result {
    let statement = try statement(for: sql)
    statement.inUse = true
    defer {
      statement.inUse = false
      statement.reset()
      if !statement.isCached { statement.finalize() }
    }
    try statement.bind(arguments)
    return try body(statement)
  }

  private func statement(for sql: String) throws(StoreError) -> Statement {
    try checkOpen(sql)
    StatementLog.note(sql, path: path)
    if let cached = cache[sql] {
      if !cached.inUse { return cached }
      return try prepare(sql, persistent: false)
    }
    if cache.count >= Self.cacheLimit { dropCache() }
    let statement = try prepare(sql, persistent: true)
    cache[sql] = statement
    return statement
  }

  /// SQLite's plan for `sql` (`EXPLAIN QUERY PLAN`), one detail line per step, with its
  /// parameters left unbound (NULL): what the plan tests read. Not cached.
  func queryPlan(_ sql: String) throws(StoreError) -> [String] {
    try checkOpen(sql)
    let statement = try prepare("EXPLAIN QUERY PLAN " + sql, persistent: false)
    defer { statement.finalize() }
    var details: [String] = []
    while try statement.step() { details.append((try? statement.row().string(3)) ?? "") }
    return details
  }

  /// The virtual machine steps the cached statement for `sql` took since this was last
  /// asked (then counting starts again), nil if it is not cached: a cost that grows with
  /// the rows a statement visits and not with the machine's load, for tests.
  func virtualMachineSteps(_ sql: String) -> Int? {
    cache[sql].map { Int(sqlite3_stmt_status($0.handle, SQLITE_STMTSTATUS_VM_STEP, 1)) }
  }

  /// Statements still running (an outer `forEach`) are finalized when they finish.
  private func dropCache() {
    for statement in cache.values {
      if statement.inUse { statement.isCached = false } else { statement.finalize() }
    }
    cache.removeAll()
  }

  private func prepare(_ sql: String, persistent: Bool) throws(StoreError) -> Statement {
    var prepared: OpaquePointer?
    let flags = persistent ? UInt32(SQLITE_PREPARE_PERSISTENT) : 0
    let (code, hasMore) = sql.withCString { text -> (Int32, Bool) in
      var tail: UnsafePointer<CChar>?
      let code = sqlite3_prepare_v3(handle, text, -1, flags, &prepared, &tail)
      guard code == SQLITE_OK, let tail else { return (code, false) }
      return (code, hasStatement(tail))
    }
    guard code == SQLITE_OK else { throw StoreError(code: code, handle: handle, sql: sql) }
    guard let prepared else {
      throw StoreError(kind: .invalidArgument, message: "no SQL statement to run", sql: sql)
    }
    if hasMore {
      sqlite3_finalize(prepared)
      throw StoreError(
        kind: .invalidArgument,
        message: "more than one statement: only the first would run (use executeScript)", sql: sql)
    }
    statementsPrepared += 1
    return Statement(handle: prepared, sql: sql, connection: handle, isCached: persistent)
  }

  /// Whether text after the first statement holds another one (not just blanks,
  /// semicolons or comments), which `execute` would otherwise skip without a word.
  private func hasStatement(_ text: UnsafePointer<CChar>) -> Bool {
    var probe: OpaquePointer?
    let code = sqlite3_prepare_v2(handle, text, -1, &probe, nil)
    defer { sqlite3_finalize(probe) }
    return code != SQLITE_OK || probe != nil
  }

  private func checkOpen(_ sql: String) throws(StoreError) {
    if isClosed { throw StoreError(kind: .closed, message: "the connection is closed", sql: sql) }
  }
}

/// A connection belongs to one thread: this keeps anyone from declaring otherwise.
@available(*, unavailable)
extension SQLiteConnection: Sendable {}

/// The closure behind a connection's WAL hook, boxed so that SQLite can hold a pointer.
private final class WALHook {
  let body: (Int32) -> Bool
  init(_ body: @escaping (Int32) -> Bool) { self.body = body }
}
