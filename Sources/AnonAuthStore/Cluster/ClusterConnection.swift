import AnonAuthDqlite
import Glibc

/// One store connection on the replicated engine: SQL goes to the dqlite cluster's
/// leader over the wire protocol. Used by one thread at a time, like `SQLiteConnection`.
///
/// The link to the leader is made on first use and again after it breaks or the leader
/// changes, but never in the middle of a transaction: the transaction lived on the lost
/// link and is gone, so the call fails (`.unavailable`) and the writer fails its batch.
/// Prepared statements are kept per SQL string, like the single-file engine's.
final class ClusterConnection: SQLConnection {
  let isReadOnly: Bool
  private let connector: DqliteConnector
  private let databaseName: String
  private let busyTimeoutMs: Int32
  private var link: (connection: DqliteConnection, database: UInt32)?
  private var statements: [String: UInt32] = [:]
  private(set) var statementsPrepared = 0
  private(set) var changes = 0
  private(set) var lastInsertRowID: Int64 = 0
  /// A BEGIN succeeded and no COMMIT or ROLLBACK has ended it yet.
  private var transactionOpen = false
  /// A statement failed inside the transaction: SQLite may have rolled it back itself.
  private var transactionUncertain = false
  /// The link broke, or the leadership moved, while a transaction was open: until the
  /// writer has learned it (`isInTransaction`, a ROLLBACK, the next BEGIN), no statement
  /// may go to a new link, where it would run on its own, outside the lost transaction.
  private var transactionLost = false
  private var isClosed = false
  /// Each statement pipelined and not yet claimed, oldest first: the connection's
  /// outcomes for them come back in the same order.
  private var pipelined: [Pending] = []
  /// The writer's index of the job sending statements now.
  var pipelineTag = 0
  /// The earliest failure among the answers claimed that was not thrown to its job; the
  /// answers after it are not looked at (the writer takes them all back).
  private var pipelineFailure: PipelineFailure?

  /// A pipelined statement waiting for its answer.
  private struct Pending {
    let sql: String
    let tag: Int
    var expectation: PipelineExpectation? = nil
    var rows: PipelinedRows? = nil
  }
  /// Round trips and requests of the links before this one.
  private var pastRoundTrips = 0
  private var pastRequests = 0

  /// Past this many distinct SQL strings the statement cache starts over, as on the
  /// single-file engine.
  static let cacheLimit = 256

  init(options: ClusterStoreOptions, readOnly: Bool, busyTimeoutMs: Int32) {
    connector = DqliteConnector(seeds: options.seeds, timeoutMs: options.timeoutMs)
    databaseName = options.databaseName
    isReadOnly = readOnly
    self.busyTimeoutMs = busyTimeoutMs
  }

  deinit { close() }

  func close() {
    isClosed = true
    link?.connection.close()
    link = nil
  }

  // MARK: SQLConnection

  /// Waits for the pipelined statements first: a write or a savepoint's RELEASE must not
  /// run after one of them failed. (A query may travel with them: it changes nothing.)
  func execute(_ sql: String, _ arguments: [SQLValue]) throws(StoreError) {
    let verb = Self.transactionVerb(sql)
    if verb == .rollback && transactionLost {
      // The transaction went with the link: nothing is left to take back.
      forgetLostTransaction()
      return
    }
    if verb == .begin { forgetLostTransaction() }
    if verb == .none { try refuseAfterEarlierFailure(sql) }
    try settle()
    let result = try retryingWhileBusy(verb == .begin) { () throws(StoreError) -> DqliteExecResult in
      try claimingPipelined { () throws(StoreError) in try executeNow(sql, arguments) }
    }
    changes = Int(result.rowsAffected)
    lastInsertRowID = result.lastInsertID
    track(verb)
  }

  private func executeNow(_ sql: String, _ arguments: [SQLValue]) throws(StoreError) -> DqliteExecResult {
    do {
      return try run(sql) { (connection, database, statement) throws(DqliteError) in
        try connection.exec(database: database, statement: statement, parameters: arguments.map(\.dqlite))
      }
    }
  }

  /// Inside a transaction the statement goes without waiting for its answer (see
  /// `SQLConnection.executePipelined`); elsewhere it is `execute`, and an expectation is
  /// checked at once.
  func executePipelined(_ sql: String, _ arguments: [SQLValue], expecting: PipelineExpectation?)
    throws(StoreError)
  {
    try refuseAfterEarlierFailure(sql)
    guard transactionOpen, !transactionUncertain, Self.transactionVerb(sql) == .none else {
      try execute(sql, arguments)
      if let expecting, changes != expecting.changes, pipelineFailure == nil {
        pipelineFailure = PipelineFailure(tag: pipelineTag, error: expecting.failure())
      }
      return
    }
    // Listed as soon as it is sent: a failure of an earlier statement read while this
    // one was prepared is thrown after the send, and this answer must still be claimed
    // as its own, not as a later statement's.
    try claimingPipelined { () throws(StoreError) in
      try run(sql) { (connection, database, statement) throws(DqliteError) in
        try connection.send(database: database, statement: statement, parameters: arguments.map(\.dqlite))
        pipelined.append(Pending(sql: sql, tag: pipelineTag, expectation: expecting))
      }
    }
  }

  /// Inside a transaction the query goes without waiting for its rows; elsewhere it runs
  /// at once.
  func queryPipelined(_ sql: String, _ arguments: [SQLValue]) throws(StoreError) -> PipelinedRows {
    try refuseAfterEarlierFailure(sql)
    guard transactionOpen, !transactionUncertain else { return PipelinedRows(try query(sql, arguments)) }
    let rows = PipelinedRows()
    try claimingPipelined { () throws(StoreError) in
      try run(sql) { (connection, database, statement) throws(DqliteError) in
        try connection.sendQuery(
          database: database, statement: statement, parameters: arguments.map(\.dqlite))
        pipelined.append(Pending(sql: sql, tag: pipelineTag, rows: rows))
      }
    }
    return rows
  }

  func executeControlPipelined(_ control: String) throws(StoreError) {
    guard transactionOpen, !transactionUncertain, let (connection, database) = link else {
      return try executeControl([control])
    }
    do {
      try connection.send(database: database, sql: control)
    } catch {
      throw failed(error, sql: control)
    }
    pipelined.append(Pending(sql: control, tag: pipelineTag))
  }

  func takePipelineFailure() -> PipelineFailure? {
    defer { pipelineFailure = nil }
    return pipelineFailure
  }

  /// Waits for the answers of the pipelined statements; the first failure of the current
  /// job's is thrown as its own statement's error.
  func settle() throws(StoreError) {
    guard !pipelined.isEmpty, let (connection, _) = link else { return }
    let outcomes: [Result<DqliteAnswer, DqliteError>]
    do {
      outcomes = try connection.settle()
    } catch {
      throw failed(error, sql: pipelined.first?.sql ?? "")
    }
    try claim(outcomes)
  }

  /// Sends `control` pipelined behind the job's statements, then waits for all of them.
  /// Without pipelined statements (or outside a transaction) it is `executeControl`.
  func settle(thenExecuting control: String) throws(StoreError) {
    guard !pipelined.isEmpty, transactionOpen, !transactionUncertain, link != nil else {
      try settle()
      return try executeControl([control])
    }
    try executeControlPipelined(control)
    try settle()
  }

  var pipelinesStatements: Bool { true }

  var roundTrips: Int { pastRoundTrips + (link?.connection.roundTrips ?? 0) }

  var requestsSent: Int { pastRequests + (link?.connection.requestsSent ?? 0) }

  /// A reader whose pooled link goes to a node that no longer leads (or whose link broke
  /// since its last use) sends the query once more, to whichever node leads now: a read
  /// is safe to repeat, and the caller is spared a `STORE_UNAVAILABLE` after a failover.
  func query(_ sql: String, _ arguments: [SQLValue]) throws(StoreError) -> [Row] {
    try refuseAfterEarlierFailure(sql)
    let hadLink = link != nil
    do {
      return try claimingPipelined { () throws(StoreError) in try queryNow(sql, arguments) }
    } catch  where isReadOnly && hadLink && link == nil && error.kind == .unavailable && !transactionOpen {
      return try queryNow(sql, arguments)
    }
  }

  private func queryNow(_ sql: String, _ arguments: [SQLValue]) throws(StoreError) -> [Row] {
    var values: [[SQLValue]] = []
    var names: [String] = []
    try run(sql) { (connection, database, statement) throws(DqliteError) in
      do {
        names = try connection.query(
          database: database, statement: statement, parameters: arguments.map(\.dqlite)
        ) {
          values.append($0.map(SQLValue.init))
        }
      } catch let error as DqliteError {
        throw error
      } catch {
        throw .malformed("\(error)")
      }
    }
    let columns = rowColumns(sql, names)
    return values.map { Row($0, columns: columns) }
  }

  /// The names of each SQL string's result, kept as the single file keeps them with its
  /// prepared statement, so that rows read by name resolve each name once per statement.
  private var columnsBySQL: [String: RowColumns] = [:]

  private func rowColumns(_ sql: String, _ names: [String]) -> RowColumns {
    if let known = columnsBySQL[sql], known.names == names { return known }
    // Bounded as the single file's statement cache is: SQL built at run time must not
    // grow it without end.
    if columnsBySQL.count >= SQLiteConnection.cacheLimit { columnsBySQL.removeAll() }
    let made = RowColumns(names)
    columnsBySQL[sql] = made
    return made
  }

  func queryOne(_ sql: String, _ arguments: [SQLValue]) throws(StoreError) -> Row? {
    try query(sql, arguments).first
  }

  /// The rows are all read before `body` sees the first: the link carries one request at
  /// a time, and a body may query again. Callers page their scans (exports, clean-up).
  func forEach(_ sql: String, _ arguments: [SQLValue], body: (Row) throws -> Void) throws {
    for row in try query(sql, arguments) { try body(row) }
  }

  func executeScript(_ sql: String) throws(StoreError) {
    try refuseAfterEarlierFailure(sql)
    try settle()
    let (connection, database) = try connected(sql)
    do {
      let result = try connection.execSQL(database: database, sql: sql)
      changes = Int(result.rowsAffected)
    } catch {
      throw failed(error, sql: sql)
    }
  }

  /// One `EXEC_SQL` for all of them; the transaction's state follows each verb. When it
  /// fails part-way, which statements ran is not known: the next `isInTransaction` asks.
  func executeControl(_ statements: [String]) throws(StoreError) {
    let sql = statements.joined(separator: "; ")
    let verbs = statements.map(Self.transactionVerb)
    if verbs.first == .begin { forgetLostTransaction() }
    // A RELEASE or COMMIT must not run after a pipelined statement that failed.
    try settle()
    if pipelineFailure != nil {
      throw StoreError(
        kind: .invalidArgument, message: "a pipelined statement failed and its job was not taken back",
        sql: sql)
    }
    func send() throws(StoreError) {
      let (connection, database) = try connected(sql)
      do throws(DqliteError) {
        _ = try connection.execSQL(database: database, sql: sql)
      } catch {
        if verbs.contains(.begin) && !error.breaksConnection && !error.isLeadershipLost {
          transactionOpen = true
        }
        throw failed(error, sql: sql)
      }
    }
    do throws(StoreError) {
      try retryingWhileBusy(verbs.first == .begin) { () throws(StoreError) in
        let hadLink = link != nil
        do throws(StoreError) {
          try send()
        } catch  where verbs.first == .begin && hadLink && link == nil && error.kind == .unavailable {
          // The writer's link went to a node that no longer leads (or broke) while the
          // writer was idle: nothing has run, so the batch begins again on a new link
          // instead of failing every job in it after a failover.
          try send()
        }
      }
    } catch {
      if transactionOpen { transactionUncertain = true }
      throw error
    }
    for verb in verbs { track(verb) }
  }

  var isInTransaction: Bool {
    // Pipelined answers are read first: a failure among them is what the probe must see.
    if !pipelined.isEmpty { _ = try? settle() }
    guard transactionOpen else {
      forgetLostTransaction()
      return false
    }
    guard transactionUncertain else { return true }
    // SQLite rolls back by itself after some failures (disk full, I/O, interruption). A
    // BEGIN tells: it fails inside a transaction and succeeds outside one.
    guard let (connection, database) = link else { return false }
    do {
      _ = try connection.execSQL(database: database, sql: "BEGIN")
      _ = try? connection.execSQL(database: database, sql: "ROLLBACK")
      transactionOpen = false
    } catch {
      if error.breaksConnection || error.isLeadershipLost { drop() }
      transactionOpen = !error.breaksConnection && !error.isLeadershipLost
    }
    transactionUncertain = false
    return transactionOpen
  }

  /// The schema declares no deferrable foreign key, so no violation can wait for COMMIT.
  var hasDeferredForeignKeyViolations: Bool { false }

  // MARK: The link

  private func connected(_ sql: String) throws(StoreError) -> (DqliteConnection, UInt32) {
    if isClosed { throw StoreError(kind: .closed, message: "the connection is closed", sql: sql) }
    if let link, link.connection.isOpen { return link }
    if transactionOpen || transactionLost {
      transactionLost = transactionLost || transactionOpen
      transactionOpen = false
      drop()
      throw StoreError(
        kind: .unavailable, message: "the link to the leader broke during a transaction", sql: sql)
    }
    do {
      let connection = try connector.connectToLeader()
      let database = try connection.open(databaseName)
      _ = try connection.execSQL(database: database, sql: "PRAGMA foreign_keys=ON")
      // A transaction must never spill pages into the WAL before it commits: libdqlite
      // 1.11.1 then fails its own reads of them with SQLITE_IOERR_SHORT_READ when the WAL
      // was empty at its start (fixed upstream after 1.11.1). Seen here as "disk I/O
      // error" on group-committed batches of 128 sign-ups and more.
      _ = try connection.execSQL(database: database, sql: "PRAGMA cache_spill=OFF")
      if isReadOnly { _ = try connection.execSQL(database: database, sql: "PRAGMA query_only=ON") }
      statements = [:]
      link = (connection, database)
      return (connection, database)
    } catch {
      throw StoreError(error, sql: sql)
    }
  }

  /// Prepares `sql` once per link and runs `body` with its statement id.
  private func run<T>(
    _ sql: String, _ body: (DqliteConnection, UInt32, UInt32) throws(DqliteError) -> T
  ) throws(StoreError) -> T {
    let (connection, database) = try connected(sql)
    do {
      let statement: UInt32
      if let cached = statements[sql] {
        statement = cached
      } else {
        if statements.count >= Self.cacheLimit {
          for id in statements.values { try connection.finalize(database: database, statement: id) }
          statements.removeAll()
        }
        statement = try connection.prepare(database: database, sql: sql).statement
        statementsPrepared += 1
        statements[sql] = statement
      }
      return try body(connection, database, statement)
    } catch {
      throw failed(error, sql: sql)
    }
  }

  /// Maps a failure and decides what it did to the link and the transaction.
  private func failed(_ error: DqliteError, sql: String) -> StoreError {
    if error.breaksConnection || error.isLeadershipLost {
      drop()
      transactionLost = transactionLost || transactionOpen
      transactionOpen = false
    } else if case .failure(let code, let message) = error, code & 0xff != 19,
      Self.transactionVerbs(sql).contains(.commit)
    {
      // A COMMIT the leader could not finish for any reason but a constraint (a lost or
      // handed-over leadership shows as odd codes then): whether the Raft entry was
      // applied is not known. The link is dropped, which rolls back whatever is left,
      // and the caller is told the outcome is unknown.
      drop()
      transactionOpen = false
      return StoreError(
        kind: .unavailable,
        message: "the leader could not finish the commit (dqlite \(code): \(message)); "
          + "whether it was applied is unknown", sql: sql)
    } else if transactionOpen {
      transactionUncertain = true
    }
    return StoreError(error, sql: sql)
  }

  /// Ends the link's stream as a network failure or a node that stopped leading would,
  /// unknown to this side until its next call (`Database.breakLinkForTesting`).
  func breakLinkForTesting() {
    link?.connection.shutDownForTesting()
  }

  /// A job of the batch running on top of an earlier job's failure is taken back and runs
  /// again: it must not go on (its statements could outlive the transaction), and what
  /// it is told does not matter (the writer reports the earlier failure).
  private func refuseAfterEarlierFailure(_ sql: String) throws(StoreError) {
    guard pipelineFailure != nil || transactionLost else { return }
    throw StoreError(
      kind: .unavailable, message: "an earlier statement of the batch failed; this job is taken back",
      sql: sql)
  }

  private func forgetLostTransaction() {
    transactionLost = false
  }

  private func drop() {
    pastRoundTrips += link?.connection.roundTrips ?? 0
    pastRequests += link?.connection.requestsSent ?? 0
    link?.connection.close()
    link = nil
    statements = [:]
    pipelined = []
  }

  /// Runs `body`, which may wait on the link and so read the answers of statements
  /// pipelined before it, then claims those answers: the earliest failure is thrown, as
  /// it happened first (the statements after it ran all the same; the job fails, and the
  /// writer rolls its savepoint back).
  private func claimingPipelined<T>(_ body: () throws(StoreError) -> T) throws(StoreError) -> T {
    let value: T
    do {
      value = try body()
    } catch {
      try claimPipelined()
      throw error
    }
    try claimPipelined()
    return value
  }

  /// Throws the first failure among the pipelined answers read so far, and forgets them.
  private func claimPipelined() throws(StoreError) {
    guard !pipelined.isEmpty, let (connection, _) = link else { return }
    try claim(connection.takeSettled())
  }

  /// Hands each answer to its statement, oldest first. The first failure of the current
  /// job's is thrown (the job fails as a whole); an earlier job's failure, or an
  /// expectation not met, is kept for the writer instead. After either, later failures
  /// and expectations are not looked at (the writer takes those statements back), but a
  /// query's rows still fill its handle.
  private func claim(_ outcomes: [Result<DqliteAnswer, DqliteError>]) throws(StoreError) {
    // The answered ones, oldest first; statements sent since stay listed for their answers.
    let statements = pipelined.prefix(outcomes.count)
    pipelined.removeFirst(min(outcomes.count, pipelined.count))
    var own: StoreError?
    for (outcome, statement) in zip(outcomes, statements) {
      let judged = own == nil && pipelineFailure == nil
      switch outcome {
      case .failure(let error):
        guard judged else { continue }
        let failure = failed(error, sql: statement.sql)
        if statement.tag == pipelineTag {
          own = failure
        } else {
          pipelineFailure = PipelineFailure(tag: statement.tag, error: failure)
        }
      case .success(let answer):
        if let rows = statement.rows { rows.fill((answer.rows ?? []).map { Row($0.map(SQLValue.init)) }) }
        if judged, let expectation = statement.expectation,
          Int(answer.result?.rowsAffected ?? -1) != expectation.changes
        {
          pipelineFailure = PipelineFailure(tag: statement.tag, error: expectation.failure())
        }
      }
    }
    if let own { throw own }
  }

  /// Another node's writer may hold the write lock on the leader: a BEGIN that finds it
  /// busy waits and tries again, as SQLite's busy timeout does on one machine.
  private func retryingWhileBusy<T>(_ retry: Bool, _ body: () throws(StoreError) -> T) throws(StoreError) -> T
  {
    var waitedMs: Int32 = 0
    var pauseMs: Int32 = 1
    while true {
      do {
        return try body()
      } catch  where retry && error.kind == .busy && waitedMs < busyTimeoutMs {
        usleep(UInt32(pauseMs) * 1_000)
        waitedMs += pauseMs
        pauseMs = min(pauseMs * 2, 50)
      }
    }
  }

  // MARK: Transactions

  enum TransactionVerb { case none, begin, commit, rollback }

  /// BEGIN opens a transaction; COMMIT and END commit it; ROLLBACK (not ROLLBACK TO)
  /// takes it back.
  static func transactionVerb(_ sql: String) -> TransactionVerb {
    let words = sql.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "\t" || $0 == ";" })
      .prefix(2).map { $0.uppercased() }
    switch words.first {
    case "BEGIN": return .begin
    case "COMMIT", "END": return .commit
    case "ROLLBACK": return words.count > 1 && words[1] == "TO" ? .none : .rollback
    default: return .none
    }
  }

  /// The verb of each statement of `sql` (statements split at semicolons: control
  /// statements hold no quoted text).
  static func transactionVerbs(_ sql: String) -> [TransactionVerb] {
    sql.split(separator: ";").map { transactionVerb(String($0)) }
  }

  private func track(_ verb: TransactionVerb) {
    switch verb {
    case .begin:
      transactionOpen = true
      transactionUncertain = false
    case .commit, .rollback:
      transactionOpen = false
      transactionUncertain = false
    case .none: break
    }
  }
}

/// A connection belongs to one thread: this keeps anyone from declaring otherwise.
@available(*, unavailable)
extension ClusterConnection: Sendable {}

extension SQLValue {
  var dqlite: DqliteValue {
    switch self {
    case .null: .null
    case .integer(let value): .integer(value)
    case .real(let value): .real(value)
    case .text(let value): .text(value)
    case .blob(let value): .blob(value)
    }
  }

  init(_ value: DqliteValue) {
    switch value {
    case .null: self = .null
    case .integer(let number): self = .integer(number)
    case .real(let number): self = .real(number)
    case .text(let string): self = .text(string)
    case .blob(let bytes): self = .blob(bytes)
    }
  }
}
