import Synchronization

/// The rows of a query sent without waiting (`Database.queryPipelined`). They arrive with
/// the job's next call that waits, or when the writer waits for the batch; a job returns
/// the handle, and its caller reads the rows once the write is acknowledged (the writer
/// reads every answer before COMMIT).
public final class PipelinedRows: Sendable {
  private let answered: Mutex<[Row]?>

  init(_ rows: [Row]? = nil) {
    answered = Mutex(rows)
  }

  func fill(_ rows: [Row]) {
    answered.withLock { $0 = rows }
  }

  /// The query's rows.
  /// - Throws: `.invalidArgument` if they have not arrived: read only after the write returned.
  public func rows() throws(StoreError) -> [Row] {
    guard let rows = answered.withLock({ $0 }) else {
      throw StoreError(
        kind: .invalidArgument, message: "a pipelined query's rows were read before they arrived")
    }
    return rows
  }

  /// The first row, or nil.
  public func first() throws(StoreError) -> Row? {
    try rows().first
  }
}

/// What a pipelined statement must have changed, and the job's failure if it did not: a
/// decision the leader makes (an `INSERT … SELECT … WHERE` that inserts or not) without
/// the job waiting for it.
struct PipelineExpectation {
  let changes: Int
  let failure: @Sendable () -> any Error
}

/// A job's pipelined statement that failed, or whose expectation was not met, found
/// after the job stopped waiting for it: the writer fails job `tag` (its index in the
/// batch) and takes back its savepoint, with every job after it.
struct PipelineFailure {
  let tag: Int
  let error: any Error
}
