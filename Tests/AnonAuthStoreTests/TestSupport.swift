import AnonAuthDqlite
import AnonAuthStore
import AnonAuthTestSupport
import Foundation
import Testing

/// The schema the tests write to.
enum TestSchema {
  static let items = Migration(
    version: 1,
    sql: """
      CREATE TABLE items(
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        score REAL,
        data BLOB,
        flag INTEGER NOT NULL DEFAULT 0
      );
      """)

  static let tags = Migration(
    version: 2,
    sql: """
      CREATE TABLE tags(
        item_id INTEGER NOT NULL REFERENCES items(id) DEFERRABLE INITIALLY DEFERRED,
        tag TEXT NOT NULL
      );
      ALTER TABLE items ADD COLUMN note TEXT;
      """)

  static let all = [items, tags]
}

/// The store's two engines: tests of behaviour both must share run on each.
enum Engine: String, CaseIterable, Sendable, CustomTestStringConvertible {
  /// The single SQLite file.
  case file
  /// A one-node dqlite cluster in this process, reached over its wire protocol.
  case cluster

  var testDescription: String { rawValue }
}

/// Opens a store in a fresh directory, runs `body`, then closes the store and removes the
/// directory whatever happened.
func withStore<Result: Sendable>(
  engine: Engine = .file,
  migrations: [Migration] = TestSchema.all,
  configure: (inout StoreOptions) -> Void = { _ in },
  _ body: (Store, TemporaryDirectory) async throws -> Result
) async throws -> Result {
  let directory = try TemporaryDirectory()
  defer { directory.remove() }
  var options = StoreOptions(path: directory.file("store.sqlite"))
  var nodes: LoopbackNodes?
  if engine == .cluster {
    let started = try LoopbackNodes()
    try started.start(1)
    nodes = started
    options.cluster = ClusterStoreOptions(seeds: started.seeds)
  }
  defer { withExtendedLifetime(nodes) {} }
  configure(&options)
  let store = try Store.open(options: options, migrations: migrations)
  do {
    let result = try await body(store, directory)
    await store.close()
    return result
  } catch {
    await store.close()
    throw error
  }
}

extension Store {
  /// Inserts one item and returns its id.
  @discardableResult
  func insertItem(_ name: String, score: Double? = nil) async throws -> Int64 {
    try await write { database in
      try database.execute(
        "INSERT INTO items(name, score) VALUES (?, ?)", [.text(name), score.map(SQLValue.real) ?? .null])
      return database.lastInsertRowID
    }
  }

  func itemCount() async throws -> Int {
    try await read { database in try database.queryOne("SELECT count(*) FROM items")?.int(0) ?? -1 }
  }

  func itemNames() async throws -> Set<String> {
    try await read { database in
      Set(try database.query("SELECT name FROM items").map { try $0.string(0) })
    }
  }
}

extension Database {
  /// SQLite's plan for `sql`, its steps' details joined by " | ": what the plan tests
  /// read to see which index a statement uses.
  func queryPlan(_ sql: String, _ arguments: [SQLValue]) throws -> String {
    try query("EXPLAIN QUERY PLAN " + sql, arguments).map { try $0.string(3) }.joined(separator: " | ")
  }
}

/// A Swift error thrown by a job, to be told apart from the store's own errors.
struct JobFailed: Error, Equatable {
  let name: String
}

/// A store of an older release upgraded: made with the schema's migrations up to
/// `version` and `seed`'s rows, closed, then opened with every migration as a newer daemon
/// opens it. `body` gets the upgraded store, closed afterwards whatever happened.
func withUpgradedStore(
  from version: Int, seed: @escaping @Sendable (Database) throws -> Void,
  _ body: (Store) async throws -> Void
) async throws {
  let directory = try TemporaryDirectory()
  defer { directory.remove() }
  let options = StoreOptions(path: directory.file("anonauth.db"))
  let old = try Store.open(
    options: options, migrations: AnonAuthSchema.migrations.filter { $0.version <= version })
  do { try await old.write(seed) } catch {
    await old.close()
    throw error
  }
  await old.close()
  let store = try Store.open(options: options, migrations: AnonAuthSchema.migrations)
  do { try await body(store) } catch {
    await store.close()
    throw error
  }
  await store.close()
}

/// `store`'s writer held busy by a job that waits for `release()`: the writes sent
/// meanwhile wait in its queue, and go together once it is released.
struct HeldWriter: Sendable {
  private let gate: DispatchSemaphore
  private let job: Task<Void, any Error>

  /// Returns once the writer runs the holding job.
  static func hold(_ store: Store) async throws -> HeldWriter {
    let gate = DispatchSemaphore(value: 0)
    let running = Flag()
    let job = Task {
      try await store.write { _ in
        running.set()
        gate.wait()
      }
    }
    while !running.isSet { try await Task.sleep(for: .milliseconds(1)) }
    return HeldWriter(gate: gate, job: job)
  }

  func release() { gate.signal() }

  /// Waits for the holding job's commit (after `release()`).
  func finished() async throws { try await job.value }
}
