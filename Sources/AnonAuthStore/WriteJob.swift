import Dispatch

/// One queued write. `perform` runs on the writer thread inside the job's savepoint and
/// returns the acknowledgement to send once the batch has committed, so that a caller
/// never hears "done" about a write that could still be rolled back.
///
/// Exactly one of the acknowledgement and `fail` is ever called, once.
struct WriteJob: Sendable {
  let perform: @Sendable (Database) throws -> @Sendable () -> Void
  let fail: @Sendable (any Error) -> Void
  /// When the job was submitted (monotonic), for the write-latency histogram.
  let submittedAt: UInt64

  init(
    perform: @escaping @Sendable (Database) throws -> @Sendable () -> Void,
    fail: @escaping @Sendable (any Error) -> Void,
    submittedAt: UInt64 = DispatchTime.now().uptimeNanoseconds
  ) {
    self.perform = perform
    self.fail = fail
    self.submittedAt = submittedAt
  }
}
