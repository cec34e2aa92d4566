import Dispatch

/// The store: one writer connection on a thread of its own that group-commits, and
/// read-only connections on serial queues, on either engine (the single SQLite file, or
/// the dqlite cluster's leader). Every call is async and every connection
/// blocks only its own thread, never Swift's cooperative pool.
///
/// The store runs jobs, not queries of its own: a job is a closure that takes a
/// `Database`. The repositories of this module (`Repositories/`, one per table or
/// concern, over the records' declarations in `Records/`) are what jobs call; the service
/// layer above writes the jobs and names no table.
public final class Store: Sendable {
  public let options: StoreOptions
  /// The schema version after migrations ran at open.
  public let schemaVersion: Int
  private let writer: Writer
  private let readers: ReaderPool
  /// The single-file engine's background checkpoints (nil on the replicated engine,
  /// whose nodes checkpoint their own copies).
  private let checkpointer: Checkpointer?
  let counters: StoreCounters
  /// Backups run one at a time, on a queue of their own: they sleep between steps.
  private let backupQueue = DispatchQueue(label: "anonauth.store.backup")

  private init(
    options: StoreOptions, schemaVersion: Int, writer: Writer, readers: ReaderPool,
    checkpointer: Checkpointer?, counters: StoreCounters
  ) {
    self.options = options
    self.schemaVersion = schemaVersion
    self.writer = writer
    self.readers = readers
    self.checkpointer = checkpointer
    self.counters = counters
  }

  /// Without `close()`, queued writes still finish and the connections still close, on
  /// their own threads, once the last reference goes.
  deinit {
    readers.close {}
    checkpointer?.close {}
    writer.close {}
  }

  /// Opens (or creates) the store, checks its integrity and brings its schema up to date.
  ///
  /// It blocks the calling thread for that work, once at start-up, before the store can
  /// be shared.
  /// - Throws: `StoreError`: `.corrupt` for a damaged file, `.schemaTooNew` for a file
  ///   written by a newer build, `.migrationFailed`, `.invalidArgument` for bad options.
  public static func open(options: StoreOptions, migrations: [Migration] = []) throws(StoreError) -> Store {
    try options.validate()
    let counters = StoreCounters()
    let writerConnection: Database
    let version: Int
    let readerConnections: [Database]
    let checkpointer: Checkpointer?
    do throws(StoreError) {
      (writerConnection, version) = try openWriter(options, migrations)
      do throws(StoreError) {
        readerConnections = try openReaders(options)
        checkpointer = try openCheckpointer(options, writer: writerConnection, counters: counters)
      } catch {
        writerConnection.close()
        throw error
      }
    } catch {
      throw error.with(kind: error.kind, messagePrefix: "cannot open the store at \(options.path): ")
    }
    let writer = Writer(
      database: writerConnection, maxBatch: options.maxBatch,
      commitDelayNanoseconds: UInt64(options.commitDelayMicroseconds) * 1000, counters: counters)
    let readers = ReaderPool(
      readers: readerConnections.enumerated().map { index, connection in
        Reader(database: connection, label: "anonauth.store.reader.\(index)")
      })
    writer.start(name: "anonauth-writer")
    checkpointer?.start(name: "anonauth-ckpt")
    return Store(
      options: options, schemaVersion: version, writer: writer, readers: readers, checkpointer: checkpointer,
      counters: counters)
  }

  /// A connection of its own for checkpoints, and the writer's WAL hook that wakes it
  /// (instead of SQLite's automatic checkpoint inside the writer's commits). Only for
  /// the single file.
  private static func openCheckpointer(
    _ options: StoreOptions, writer: Database, counters: StoreCounters
  ) throws(StoreError) -> Checkpointer? {
    guard options.cluster == nil, let writerLink = writer.connection as? SQLiteConnection else { return nil }
    let connection = try connect(options, readOnly: false)
    do throws(StoreError) {
      // A checkpoint syncs the database file as the connection that runs it is told to.
      try connection.execute("PRAGMA synchronous=\(options.synchronous.rawValue)")
    } catch {
      connection.close()
      throw error
    }
    let checkpointer = Checkpointer(
      database: connection, storeWritable: { counters.writable.load(ordering: .relaxed) })
    writerLink.onWALCommit { pages in checkpointer.committed(walPages: pages) }
    return checkpointer
  }

  /// The writer comes first: it creates the file and switches it to WAL, which a
  /// read-only connection cannot do.
  private static func openWriter(
    _ options: StoreOptions, _ migrations: [Migration]
  ) throws(StoreError) -> (Database, Int) {
    let connection = try connect(options, readOnly: false)
    do throws(StoreError) {
      try connection.configureWriter(synchronous: options.synchronous, cacheKiB: options.writerCacheKiB)
      if options.checkIntegrityAtOpen { try connection.quickCheck() }
      return (connection, try Migrator.migrate(connection, to: migrations))
    } catch {
      connection.close()
      throw error
    }
  }

  private static func openReaders(_ options: StoreOptions) throws(StoreError) -> [Database] {
    var connections: [Database] = []
    do throws(StoreError) {
      for _ in 0..<options.readerCount {
        let connection = try connect(options, readOnly: true)
        connections.append(connection)
        try connection.configureReader()
      }
      return connections
    } catch {
      for connection in connections { connection.close() }
      throw error
    }
  }

  /// A connection on the engine `options` name.
  private static func connect(_ options: StoreOptions, readOnly: Bool) throws(StoreError) -> Database {
    if let cluster = options.cluster {
      return Database(
        ClusterConnection(options: cluster, readOnly: readOnly, busyTimeoutMs: options.busyTimeoutMs))
    }
    return Database(
      try SQLiteConnection(path: options.path, readOnly: readOnly, busyTimeoutMs: options.busyTimeoutMs))
  }

  /// Runs `job` on the writer thread, in a transaction shared with the other writes queued
  /// at the time, inside a savepoint of its own.
  ///
  /// Returns only after COMMIT: an acknowledged write is on disk (with
  /// `synchronous=FULL`). If `job` throws, only its own changes are rolled back.
  /// `job` must not BEGIN, COMMIT or ROLLBACK itself; savepoints of its own are fine.
  /// It may run more than once (on the replicated store a job that ran on top of an
  /// earlier job's late failure runs again): only its last run's changes and value
  /// count, so it must have no effect outside the store.
  /// - Throws: what `job` threw (told when its batch is over); the commit's `StoreError`
  ///   if the batch failed;
  ///   `.closed` after `close()`; `CancellationError` if the task was cancelled before
  ///   the writer took the job (it never ran; counted in `StoreMetrics.writesDropped`).
  ///   Once the writer has taken it, it runs and commits whatever happens to the task.
  public func write<T: Sendable>(_ job: @escaping @Sendable (Database) throws -> T) async throws -> T {
    if Task.isCancelled {
      counters.recordDropped()
      throw CancellationError()
    }
    if counters.failedIntegrity.load(ordering: .relaxed) { throw Self.refusedAfterFailedCheck }
    let cancellation = WriteJob.Cancellation()
    return try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { continuation in
        writer.submit(
          WriteJob(
            perform: { database in
              let value = try job(database)
              return { continuation.resume(returning: value) }
            },
            fail: { continuation.resume(throwing: $0) }, cancellation: cancellation))
      }
    } onCancel: {
      cancellation.cancel()
    }
  }

  /// Runs `job` on a read-only connection: it sees every write acknowledged before the
  /// call, and SQLite refuses any write it attempts (`.readOnly`).
  /// - Throws: what `job` threw; `.closed` after `close()`; `CancellationError` if the
  ///   task was cancelled before the job was queued.
  public func read<T: Sendable>(_ job: @escaping @Sendable (Database) throws -> T) async throws -> T {
    try Task.checkCancellation()
    return try await withCheckedThrowingContinuation { continuation in
      readers.submit(
        ReadJob(
          run: { database in continuation.resume(with: Result { try job(database) }) },
          fail: { continuation.resume(throwing: $0) }))
    }
  }

  /// Copies the store, while it keeps serving, to a new file at `path`.
  /// - Parameters:
  ///   - pagesPerStep: pages copied between pauses; smaller steps share the disk better.
  ///   - progress: called after each step with (pages copied, total pages), on the
  ///     backup's own thread.
  /// - Returns: the size in bytes of the backup file.
  /// - Throws: `.invalidArgument` if `path` (or its `-wal`) exists: a backup never
  ///   overwrites; a `StoreError` from SQLite if the copy fails (nothing is left at `path`).
  public func backup(
    to path: String, pagesPerStep: Int32 = 256, progress: (@Sendable (Int, Int) -> Void)? = nil
  ) async throws -> UInt64 {
    let source = options.path
    let busyTimeoutMs = options.busyTimeoutMs
    let cluster = options.cluster
    return try await withCheckedThrowingContinuation { continuation in
      backupQueue.async {
        continuation.resume(
          with: Result { () throws(StoreError) -> UInt64 in
            if let cluster {
              return try ClusterBackup.copy(cluster, to: path, busyTimeoutMs: busyTimeoutMs)
            }
            return try OnlineBackup.copy(
              from: source, to: path, pagesPerStep: pagesPerStep, busyTimeoutMs: busyTimeoutMs,
              progress: progress)
          })
      }
    }
  }

  /// Finishes every read and write already queued, then closes all connections. Later
  /// calls to `write` and `read` fail with `.closed`. Safe to call more than once.
  ///
  /// Readers close first: the last connection to close checkpoints the WAL into the
  /// database file and removes it, and only the writer is allowed to.
  public func close() async {
    await withCheckedContinuation { continuation in
      readers.close { continuation.resume() }
    }
    if let checkpointer {
      await withCheckedContinuation { continuation in
        checkpointer.close { continuation.resume() }
      }
    }
    await withCheckedContinuation { continuation in
      writer.close { continuation.resume() }
    }
  }

  /// Whether the last write transaction began and committed: `/readyz` turns unready
  /// when the disk is full or the file became read-only.
  public var isWritable: Bool {
    counters.writable.load(ordering: .relaxed) && !counters.failedIntegrity.load(ordering: .relaxed)
  }

  /// The writer's counters, for metrics: transactions, writes, batch sizes, commit time,
  /// queue depth.
  public var metrics: StoreMetrics {
    var metrics = counters.snapshot()
    metrics.queuedWrites = writer.queuedCount
    metrics.checkpoints = checkpointer?.passes.load(ordering: .relaxed) ?? 0
    metrics.writerCheckpoints = checkpointer?.writerPasses.load(ordering: .relaxed) ?? 0
    metrics.limitCheckpoints = checkpointer?.limitPasses.load(ordering: .relaxed) ?? 0
    return metrics
  }
}
