/// The connection a repository's job gets: the writer's, inside the batch's transaction,
/// or a reader's. The same SQL runs on either engine; jobs receive it as a parameter and
/// cannot keep it, because it is not Sendable.
public final class Database {
  let connection: any SQLConnection

  init(_ connection: any SQLConnection) {
    self.connection = connection
  }

  /// True for reader connections: the engine itself refuses their writes.
  public var isReadOnly: Bool { connection.isReadOnly }

  /// How many statements this connection has compiled: lets tests prove cache reuse.
  public var statementsPrepared: Int { connection.statementsPrepared }

  /// On the single file, the virtual machine steps `sql` took since last asked (nil if
  /// not cached, or on the replicated store): tests prove a statement's cost does not
  /// grow with the data without timing it.
  func virtualMachineSteps(_ sql: String) -> Int? {
    (connection as? SQLiteConnection)?.virtualMachineSteps(sql)
  }

  /// On the single file, SQLite's plan for `sql`, one detail line per step (parameters
  /// unbound); nil on the replicated store. For the tests that keep hot paths off full
  /// scans.
  public func queryPlan(_ sql: String) throws(StoreError) -> [String]? {
    try (connection as? SQLiteConnection)?.queryPlan(sql)
  }

  /// Runs one statement, discarding any rows.
  /// - Throws: `StoreError`; `isUniqueViolation` tells a duplicate key from other failures.
  public func execute(_ sql: String, _ arguments: [SQLValue] = []) throws(StoreError) {
    try connection.execute(sql, arguments)
  }

  /// Runs one statement and returns all its rows.
  public func query(_ sql: String, _ arguments: [SQLValue] = []) throws(StoreError) -> [Row] {
    try connection.query(sql, arguments)
  }

  /// The first row, or nil.
  public func queryOne(_ sql: String, _ arguments: [SQLValue] = []) throws(StoreError) -> Row? {
    try connection.queryOne(sql, arguments)
  }

  /// Hands rows to `body` one at a time.
  /// - Throws: a `StoreError`, or whatever `body` throws (which stops the scan).
  public func forEach(_ sql: String, _ arguments: [SQLValue] = [], body: (Row) throws -> Void) throws {
    try connection.forEach(sql, arguments, body: body)
  }

  /// Runs SQL that may hold several statements (migrations). Nothing is cached and no
  /// arguments can be bound: not for values from input.
  public func executeScript(_ sql: String) throws(StoreError) {
    try connection.executeScript(sql)
  }

  /// Runs a statement whose outcome the job does not read, not even `changes` or
  /// `lastInsertRowID`. The replicated engine sends it inside the writer's transaction
  /// without waiting for the leader's answer; the answer travels back with the job's next
  /// query, or when the writer waits for the batch. A failure is thrown there instead of
  /// here, or fails the job after it returned, and the job's later statements (and the
  /// later jobs' of the batch) have run all the same: use it only where any failure fails
  /// the whole job (the writer then rolls the job's savepoint back). Runs at once on the
  /// single file.
  public func executePipelined(_ sql: String, _ arguments: [SQLValue] = []) throws(StoreError) {
    try connection.executePipelined(sql, arguments, expecting: nil)
  }

  /// `executePipelined`, for a statement that decides on the leader whether to change
  /// anything (`INSERT … SELECT … WHERE`): unless it changed exactly `changes` rows the
  /// job fails with `failure()` once it has returned, and its savepoint is rolled back.
  /// The job does not learn the outcome while it runs, on either engine: it goes on as
  /// if the statement had succeeded.
  public func executePipelined(
    _ sql: String, _ arguments: [SQLValue] = [], expectingChanges changes: Int,
    else failure: @escaping @Sendable () -> any Error
  ) throws(StoreError) {
    try connection.executePipelined(
      sql, arguments, expecting: PipelineExpectation(changes: changes, failure: failure))
  }

  /// Sends a query without waiting for its rows, on the replicated engine inside the
  /// writer's transaction: they fill the handle when the job's next call that waits, or
  /// the writer, reads the answers. The handle is Sendable: a job returns it, and its
  /// caller reads the rows once the write is acknowledged. For small results. Runs at
  /// once on the single file.
  public func queryPipelined(_ sql: String, _ arguments: [SQLValue] = []) throws(StoreError) -> PipelinedRows
  {
    try connection.queryPipelined(sql, arguments)
  }

  /// Waits for the pipelined statements; throws the current job's first failure.
  func settle() throws(StoreError) {
    try connection.settle()
  }

  /// Sends `control` (a statement without arguments) behind the pipelined statements and
  /// waits for them all: one round trip. A failure among them, `control`'s included, is
  /// thrown as `settle` throws it.
  func settle(thenExecuting control: String) throws(StoreError) {
    try connection.settle(thenExecuting: control)
  }

  /// Sends `control` behind the pipelined statements without waiting (the writer's next
  /// savepoint); at once on the single file.
  func executeControlPipelined(_ control: String) throws(StoreError) {
    try connection.executeControlPipelined(control)
  }

  /// The writer's index of the job now running: a pipelined failure found later is
  /// charged to the job that sent the statement.
  var pipelineTag: Int {
    get { connection.pipelineTag }
    set { connection.pipelineTag = newValue }
  }

  /// The earliest failure of a pipelined statement (or expectation) that was not thrown
  /// to its job, and the job's tag; forgotten once taken.
  func takePipelineFailure() -> PipelineFailure? {
    connection.takePipelineFailure()
  }

  /// True on the replicated store, whose statements can go without waiting.
  var pipelinesStatements: Bool { connection.pipelinesStatements }

  /// Times this connection waited for the replicated store's leader (0 on the single
  /// file): the latency a write job pays, counted.
  public var roundTrips: Int { connection.roundTrips }

  /// Requests this connection sent to the leader, pipelined or not (0 on the single file).
  public var requestsSent: Int { connection.requestsSent }

  /// Transaction control statements (no arguments) in order, stopping at the first that
  /// fails: the writer's savepoints and commits, which the replicated engine sends as one
  /// request instead of one each.
  func executeControl(_ statements: String...) throws(StoreError) {
    try connection.executeControl(statements)
  }

  /// Rows changed by the last INSERT, UPDATE or DELETE on this connection.
  public var changes: Int { connection.changes }

  /// The rowid of the last successful INSERT on this connection.
  public var lastInsertRowID: Int64 { connection.lastInsertRowID }

  /// False when no transaction is open: after an error that made the engine roll back
  /// the whole transaction, the writer must not go on as if earlier writes were pending.
  public var isInTransaction: Bool { connection.isInTransaction }

  /// True while the transaction holds a deferred foreign-key violation that COMMIT would
  /// reject: the writer checks it after each job, so one job cannot fail its whole batch.
  var hasDeferredForeignKeyViolations: Bool { connection.hasDeferredForeignKeyViolations }

  /// Makes every COMMIT on this connection fail until called with false: the one way to
  /// test the writer's handling of a failed COMMIT (single-file engine only).
  func rejectCommits(_ reject: Bool) {
    (connection as? SQLiteConnection)?.rejectCommits(reject)
  }

  /// Closes the replicated engine's link to the leader under the job, as a network
  /// failure would: the one way to test what a job's next statement does then.
  func breakLinkForTesting() {
    (connection as? ClusterConnection)?.breakLinkForTesting()
  }

  func close() { connection.close() }
}

/// A connection belongs to one thread: this keeps anyone from declaring otherwise.
@available(*, unavailable)
extension Database: Sendable {}
