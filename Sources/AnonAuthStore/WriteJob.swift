/// One queued write. `perform` runs on the writer thread inside the job's savepoint and
/// returns the acknowledgement to send once the batch has committed, so that a caller
/// never hears "done" about a write that could still be rolled back.
///
/// Exactly one of the acknowledgement and `fail` is ever called, once.
struct WriteJob: Sendable {
  let perform: @Sendable (Database) throws -> @Sendable () -> Void
  let fail: @Sendable (any Error) -> Void
}
