/// What the store needs of a connection, whichever engine is under it: the single-file
/// SQLite store (`SQLiteConnection`) or the replicated one (`ClusterConnection`, SQL sent
/// to the dqlite cluster's leader). Repositories see neither: they get a `Database`.
protocol SQLConnection: AnyObject {
  var isReadOnly: Bool { get }
  var statementsPrepared: Int { get }
  func execute(_ sql: String, _ arguments: [SQLValue]) throws(StoreError)
  func query(_ sql: String, _ arguments: [SQLValue]) throws(StoreError) -> [Row]
  func queryOne(_ sql: String, _ arguments: [SQLValue]) throws(StoreError) -> Row?
  func forEach(_ sql: String, _ arguments: [SQLValue], body: (Row) throws -> Void) throws
  func executeScript(_ sql: String) throws(StoreError)
  /// A statement whose answer the job does not read (its rows, `changes`,
  /// `lastInsertRowID`): inside a transaction the replicated engine sends it without
  /// waiting, and its outcome arrives with the next call that waits or with `settle`.
  /// The statements sent after it run all the same: only a job that fails as a whole
  /// when any of them fails may use it. A failure found while the same job (the same
  /// `pipelineTag`) runs is thrown there; one of an earlier job's, or an expectation not
  /// met, is kept for `takePipelineFailure`.
  func executePipelined(_ sql: String, _ arguments: [SQLValue], expecting: PipelineExpectation?)
    throws(StoreError)
  /// A query sent as `executePipelined` sends a statement; the rows fill the handle
  /// when its answer is read.
  func queryPipelined(_ sql: String, _ arguments: [SQLValue]) throws(StoreError) -> PipelinedRows
  /// Transaction control sent behind the pipelined statements without waiting.
  func executeControlPipelined(_ control: String) throws(StoreError)
  /// The writer's index of the job whose statements are sent from now on.
  var pipelineTag: Int { get set }
  /// The earliest pipelined failure not thrown to its job, forgotten once taken.
  func takePipelineFailure() -> PipelineFailure?
  /// Waits for every pipelined statement; throws the first failure of the current
  /// job's, keeps an earlier job's (`takePipelineFailure`).
  func settle() throws(StoreError)
  /// `settle`, with `control` sent behind the pipelined statements in the same flight.
  func settle(thenExecuting control: String) throws(StoreError)
  /// Whether `executePipelined` can send without waiting (the replicated engine).
  var pipelinesStatements: Bool { get }
  /// Times the connection waited for an answer from the leader (0 on the single file).
  var roundTrips: Int { get }
  /// Requests sent to the leader, pipelined or not (0 on the single file): without
  /// pipelining each would have been a round trip.
  var requestsSent: Int { get }
  /// Statements without arguments (transaction control: BEGIN, SAVEPOINT, RELEASE,
  /// COMMIT), in order, stopping at the first failure; one round trip on the replicated
  /// engine.
  func executeControl(_ statements: [String]) throws(StoreError)
  var changes: Int { get }
  var lastInsertRowID: Int64 { get }
  var isInTransaction: Bool { get }
  var hasDeferredForeignKeyViolations: Bool { get }
  func close()
}
