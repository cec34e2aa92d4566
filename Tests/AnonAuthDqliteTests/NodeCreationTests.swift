import CSQLite
import Foundation
import Synchronization
import Testing

@testable import AnonAuthDqlite

/// Nodes created at the same moment in one process must not share a SQLite VFS: a
/// node's databases live in its VFS, and libdqlite 1.11.1 names VFSes from a counter it
/// does not lock. Two nodes with one name shared one database: a test's fresh cluster
/// found another test's table ("table t already exists").
@Suite struct NodeCreationTests {
  /// The names of the VFSes libdqlite registered, read under SQLite's own lock (the one
  /// registration takes), since other tests register and free theirs meanwhile. The walk
  /// starts from the default VFS, found before the lock is taken: `sqlite3_vfs_find`
  /// takes that lock itself, and it is not recursive.
  static func dqliteVFSNames() -> [String] {
    let head = sqlite3_vfs_find(nil)
    let lock = sqlite3_mutex_alloc(SQLITE_MUTEX_STATIC_MAIN)
    sqlite3_mutex_enter(lock)
    defer { sqlite3_mutex_leave(lock) }
    var names: [String] = []
    var vfs = head
    while let current = vfs {
      if let name = current.pointee.zName.map({ String(cString: $0) }), name.hasPrefix("dqlite-") {
        names.append(name)
      }
      vfs = current.pointee.pNext
    }
    return names
  }

  @Test func nodesCreatedAtOnceHaveVFSesOfTheirOwn() async throws {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent(
      "dqlite-vfs-\(UUID().uuidString)"
    ).path
    defer { try? FileManager.default.removeItem(atPath: root) }
    let threads = 4
    // Each round starts its creations together (a spinning barrier), since the race is
    // one formatted print wide; without the fix about one round in twenty collided.
    for round in 0..<40 {
      let arrived = Atomic<Int>(0)
      let nodes = Mutex<[DqliteNode]>([])
      let done = DispatchGroup()
      for index in 0..<threads {
        let directory = "\(root)/\(round)-\(index)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        done.enter()
        Thread.detachNewThread {
          defer { done.leave() }
          arrived.add(1, ordering: .sequentiallyConsistent)
          while arrived.load(ordering: .sequentiallyConsistent) < threads {}
          // "@": an abstract Unix socket of libdqlite's choosing, so that no TCP port is
          // taken; the nodes never start.
          if let node = try? DqliteNode(
            id: 1, address: "127.0.0.1:\(40_000 + index)", bindAddress: "@", directory: directory)
          {
            nodes.withLock { $0.append(node) }
          }
        }
      }
      await withCheckedContinuation { continuation in
        done.notify(queue: .global()) { continuation.resume() }
      }
      let names = Self.dqliteVFSNames()
      let repeated = Dictionary(grouping: names, by: { $0 }).filter { $0.value.count > 1 }.keys.sorted()
      #expect(repeated.isEmpty, "round \(round): VFS names registered twice: \(repeated)")
      #expect(nodes.withLock { $0.count } == threads)
      nodes.withLock { created in
        for node in created { node.stop() }
        created.removeAll()
      }
      if !repeated.isEmpty { break }
    }
  }
}
