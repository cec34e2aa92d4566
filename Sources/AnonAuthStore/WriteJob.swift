import Dispatch
import Synchronization

/// One queued write. `perform` runs on the writer thread inside the job's savepoint and
/// returns the acknowledgement to send once the batch has committed, so that a caller
/// never hears "done" about a write that could still be rolled back.
///
/// Exactly one of the acknowledgement and `fail` is ever called, once. `perform` may be
/// called more than once (`Writer.commitPipelined`): only the last run's
/// acknowledgement is kept.
struct WriteJob: Sendable {
  let perform: @Sendable (Database) throws -> @Sendable () -> Void
  let fail: @Sendable (any Error) -> Void
  /// When the job was submitted (monotonic), for the write-latency histogram.
  let submittedAt: UInt64
  /// Set when the submitting task is cancelled: the writer drops the job if it has not
  /// taken it yet (it never ran: nothing of it is in the store); once taken, it runs
  /// and commits like any other, so an acknowledged write is never half done.
  let cancellation: Cancellation

  init(
    perform: @escaping @Sendable (Database) throws -> @Sendable () -> Void,
    fail: @escaping @Sendable (any Error) -> Void,
    submittedAt: UInt64 = DispatchTime.now().uptimeNanoseconds,
    cancellation: Cancellation = Cancellation()
  ) {
    self.perform = perform
    self.fail = fail
    self.submittedAt = submittedAt
    self.cancellation = cancellation
  }

  /// A flag the submitting task's cancellation handler sets, read by the writer thread.
  final class Cancellation: Sendable {
    private let flag = Atomic<Bool>(false)

    init() {}

    func cancel() { flag.store(true, ordering: .releasing) }
    var isCancelled: Bool { flag.load(ordering: .acquiring) }
  }
}
