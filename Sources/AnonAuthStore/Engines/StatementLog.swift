import Synchronization

/// Records the SQL of every statement the single-file connections of one store file run
/// while a recording is open. For tests: the query-plan test runs the hot paths through
/// the service and then checks the plan of exactly what they issued, instead of a
/// hand-kept copy of the SQL. With no recording open, a statement costs one atomic load.
public enum StatementLog {
  private static let open = Atomic<Int>(0)
  private static let recordings = Mutex<[String: Set<String>]>([:])

  /// Starts recording the statements run on the store file at `path`.
  public static func start(path: String) {
    let started = recordings.withLock { recordings in
      guard recordings[path] == nil else { return false }
      recordings[path] = []
      return true
    }
    if started { open.add(1, ordering: .sequentiallyConsistent) }
  }

  /// Stops recording for `path` and returns the distinct SQL run since `start`.
  public static func stop(path: String) -> Set<String> {
    let recorded = recordings.withLock { $0.removeValue(forKey: path) }
    if recorded != nil { open.subtract(1, ordering: .sequentiallyConsistent) }
    return recorded ?? []
  }

  static func note(_ sql: String, path: String) {
    guard open.load(ordering: .relaxed) > 0 else { return }
    recordings.withLock { recordings in
      if recordings[path] != nil { recordings[path]?.insert(sql) }
    }
  }
}
