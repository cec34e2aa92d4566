import Dispatch
import Synchronization

/// A queued read: `run` executes on a reader's queue, `fail` when the store has closed.
struct ReadJob: Sendable {
  let run: @Sendable (Database) -> Void
  let fail: @Sendable (StoreError) -> Void
}

/// One read-only connection and the serial queue it lives on.
final class Reader: @unchecked Sendable {
  // @unchecked Sendable is safe: `database` is used only in blocks run on `queue`, which
  // is serial; the opening thread hands it over before any block is queued.
  private let database: Database
  private let queue: DispatchQueue

  init(database: Database, label: String) {
    self.database = database
    queue = DispatchQueue(label: label)
  }

  /// Runs `body` with the connection on the reader's queue, off the cooperative pool.
  func async(_ body: @escaping @Sendable (Database) -> Void) {
    queue.async { [self] in body(database) }
  }
}

/// Hands each read to a free reader, or queues it until one is free: unlike round-robin,
/// a slow read does not hold up reads queued behind it while another reader idles.
final class ReaderPool: Sendable {
  private let readers: [Reader]
  private let state: Mutex<State>

  private struct State {
    var free: [Int]
    var waiting: [ReadJob] = []
    var closing = false
    var closed = 0
    var onClosed: [@Sendable () -> Void] = []
  }

  init(readers: [Reader]) {
    self.readers = readers
    state = Mutex(State(free: Array(readers.indices)))
  }

  func submit(_ job: ReadJob) {
    enum Placement {
      case reader(Int)
      case queued
      case rejected
    }
    let placement = state.withLock { state -> Placement in
      if state.closing { return .rejected }
      if let index = state.free.popLast() { return .reader(index) }
      state.waiting.append(job)
      return .queued
    }
    switch placement {
    case .reader(let index): start(job, on: index)
    case .queued: break
    case .rejected: job.fail(StoreError(kind: .closed, message: "the store is closed"))
    }
  }

  /// Lets queued reads finish, closes every connection on its own queue, then calls `done`.
  func close(then done: @escaping @Sendable () -> Void) {
    let (finished, idle) = state.withLock { state -> (Bool, [Int]) in
      if state.closed == readers.count { return (true, []) }
      state.onClosed.append(done)
      if state.closing { return (false, []) }
      state.closing = true
      defer { state.free.removeAll() }
      return (false, state.free)
    }
    if finished { done() }
    for index in idle {
      readers[index].async { [self] database in
        database.close()
        closedOne()
      }
    }
  }

  private func start(_ job: ReadJob, on index: Int) {
    readers[index].async { [self] database in
      var next: ReadJob? = job
      // Drain the waiting line on this queue: one hop per job would add latency.
      while let job = next {
        job.run(database)
        next = afterJob(on: index, database)
      }
    }
  }

  /// The next waiting job for reader `index`, or nil when it goes back to the free list
  /// (or, when closing, after closing its connection). Runs on the reader's queue.
  private func afterJob(on index: Int, _ database: Database) -> ReadJob? {
    enum Next {
      case run(ReadJob)
      case idle
      case close
    }
    let next = state.withLock { state -> Next in
      if !state.waiting.isEmpty { return .run(state.waiting.removeFirst()) }
      if state.closing { return .close }
      state.free.append(index)
      return .idle
    }
    switch next {
    case .run(let job): return job
    case .idle: return nil
    case .close:
      database.close()
      closedOne()
      return nil
    }
  }

  private func closedOne() {
    let callbacks = state.withLock { state -> [@Sendable () -> Void] in
      state.closed += 1
      guard state.closed == readers.count else { return [] }
      defer { state.onClosed.removeAll() }
      return state.onClosed
    }
    for callback in callbacks { callback() }
  }
}
