import CSQLite
import CShims
import Foundation
import Synchronization

/// Copies the WAL back into the database file on a thread and connection of its own, so
/// that commits do not carry the bulk of it.
///
/// SQLite's automatic checkpoint runs inside the COMMIT that crosses 1,000 WAL pages: on
/// the writer thread, with the checkpoint's reads, writes and fsync of the database file
/// added to that batch's latency and to every write queued behind it (a clean-up batch of
/// deletions crossed it every few commits). Here the writer only counts: SQLite's WAL
/// hook tells it the WAL's size after each commit, and past `threshold` pages it wakes
/// this thread, which runs a PASSIVE checkpoint (it blocks neither the writer nor the
/// readers) while the writer goes on committing.
///
/// The WAL starts over from its beginning only when a write transaction begins with every
/// frame copied back, and a busy writer always appends a few frames while the background
/// pass runs. So after a background pass the writer finishes the job itself at its next
/// commit: a PASSIVE checkpoint of only the frames written meanwhile, after which its next
/// transaction restarts the WAL. Past `writerLimit` pages (the background thread is
/// stuck) the writer checkpoints itself regardless, as SQLite's automatic checkpoint
/// would have: the WAL stays bounded whatever happens.
final class Checkpointer: Sendable {
  let threshold: Int32
  let writerLimit: Int32
  private let database: Mutex<Database?>
  private let state = Mutex(State())
  private let wake = DispatchSemaphore(value: 0)
  /// Checkpoints run here; by the writer (finishing a background pass, or past its
  /// limit); and of those, past its limit only.
  let passes = Atomic<Int>(0)
  let writerPasses = Atomic<Int>(0)
  let limitPasses = Atomic<Int>(0)

  private struct State {
    var requested = false
    /// A background pass is under way.
    var running = false
    /// A background pass ended since the writer last finished one: its next commit
    /// past the threshold checkpoints the rest.
    var passDone = false
    var sleeping = false
    var closing = false
    var stopped = false
    var onStopped: [@Sendable () -> Void] = []
  }

  /// False while the store's last write failed (a full disk): no background pass then.
  private let storeWritable: @Sendable () -> Bool

  /// - Parameters:
  ///   - database: a read-write connection of its own to the same file.
  ///   - storeWritable: whether the writer's last transaction committed. A pass while
  ///     the disk is full could copy the WAL back into pages the file already has and
  ///     let the WAL start over, so that some writes fit and others do not: refusals
  ///     should stay steady until space returns.
  init(
    database: sending Database, threshold: Int32 = 1000, writerLimit: Int32 = 8000,
    storeWritable: @escaping @Sendable () -> Bool = { true }
  ) {
    self.storeWritable = storeWritable
    self.database = Mutex(database)
    self.threshold = threshold
    self.writerLimit = writerLimit
  }

  func start(name: String) {
    let thread = Thread { [self] in
      anonauth_set_thread_name(name)
      run()
    }
    thread.name = name
    thread.start()
  }

  /// Called on the writer thread after each commit with the WAL's size in pages.
  /// - Returns: true when the writer must checkpoint itself: to finish what a background
  ///   pass left, or because the WAL is past its limit.
  func committed(walPages: Int32) -> Bool {
    if walPages >= writerLimit {
      writerPasses.add(1, ordering: .relaxed)
      limitPasses.add(1, ordering: .relaxed)
      return true
    }
    guard walPages >= threshold else { return false }
    let (signal, finish) = state.withLock { state -> (Bool, Bool) in
      if state.passDone {
        state.passDone = false
        return (false, true)
      }
      if state.requested || state.running { return (false, false) }
      state.requested = true
      defer { state.sleeping = false }
      return (state.sleeping, false)
    }
    if signal { wake.signal() }
    if finish { writerPasses.add(1, ordering: .relaxed) }
    return finish
  }

  /// Stops the thread after its current checkpoint, closes its connection, then calls
  /// `done` (at once if that already happened).
  func close(then done: @escaping @Sendable () -> Void) {
    let (signal, stopped) = state.withLock { state -> (Bool, Bool) in
      if state.stopped { return (false, true) }
      state.closing = true
      state.onStopped.append(done)
      defer { state.sleeping = false }
      return (state.sleeping, false)
    }
    if stopped { done() }
    if signal { wake.signal() }
  }

  private func run() {
    while true {
      let next = state.withLock { state -> Bool? in
        if state.closing { return nil }
        if state.requested {
          state.requested = false
          state.running = true
          return true
        }
        state.sleeping = true
        return false
      }
      switch next {
      case nil:
        database.withLock { database in
          database?.close()
          database = nil
        }
        let callbacks = state.withLock { state in
          state.stopped = true
          return state.onStopped
        }
        for callback in callbacks { callback() }
        return
      case true?:
        checkpoint()
      case false?:
        wake.wait()
      }
    }
  }

  private func checkpoint() {
    guard storeWritable() else {
      state.withLock { $0.running = false }
      return
    }
    database.withLock { database in
      // A failure (the file busy, the disk full) leaves the WAL as it was: the next
      // commit asks again, and the writer's own limit still bounds it.
      _ = try? database?.query("PRAGMA wal_checkpoint(PASSIVE)")
    }
    passes.add(1, ordering: .relaxed)
    state.withLock { state in
      state.running = false
      state.passDone = true
    }
  }
}
