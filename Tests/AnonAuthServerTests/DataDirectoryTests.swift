import AnonAuthServer
import AnonAuthTestSupport
import Foundation
import Testing

/// A data dir others may read is tightened at start, and says so.
@Suite("Data directory permissions")
struct DataDirectoryTests {
  @Test("a new data dir is 0700 and nothing is reported")
  func fresh() throws {
    let scratch = try Scratch()
    let dir = DataDirectory(path: scratch.path + "/data")
    #expect(try dir.prepare().isEmpty)
    #expect(try fileMode(dir.path) == 0o700)
  }

  @Test("a 0755 data dir and the 0644 files and 0755 folders in it are tightened and reported")
  func openDirectoryTightened() throws {
    let scratch = try Scratch()
    let fm = FileManager.default
    let root = scratch.path + "/data"
    try fm.createDirectory(atPath: root + "/backups", withIntermediateDirectories: true)
    try fm.setAttributes([.posixPermissions: 0o755], ofItemAtPath: root)
    try fm.setAttributes([.posixPermissions: 0o755], ofItemAtPath: root + "/backups")
    for file in ["anonauth.db", "anonauth.db-wal", "client.json", "backups/b1"] {
      #expect(
        fm.createFile(atPath: root + "/" + file, contents: Data([1]), attributes: [.posixPermissions: 0o644]))
    }
    let tightened = try DataDirectory(path: root).prepare().tightened
    #expect(tightened.count == 6)
    #expect(tightened.contains { $0.hasPrefix(root + ": 755") })
    #expect(try fileMode(root) == 0o700)
    #expect(try fileMode(root + "/backups") == 0o700)
    for file in ["anonauth.db", "anonauth.db-wal", "client.json", "backups/b1"] {
      #expect(try fileMode(root + "/" + file) == 0o600, "\(file)")
    }
    #expect(try DataDirectory(path: root).prepare().isEmpty)
  }

  /// A platform's volume (a Kubernetes volume with fsGroup: root's, mode 2775) cannot be
  /// tightened by the daemon: it starts, reports it, and keeps the setgid bit of what it
  /// does tighten; a file open to others that it cannot tighten still stops the start.
  @Test func aFolderOwnedBySomeoneElseIsLeftAndReportedButAForeignOpenFileIsRefused() throws {
    guard geteuid() == 0 else { return }  // only root can hand a folder to another user
    let scratch = try Scratch()
    let root = scratch.path + "/volume"
    try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    #expect(chown(root, 4242, 4242) == 0)
    #expect(chmod(root, 0o2775) == 0)
    let changes = try DataDirectory(path: root).prepare()
    #expect(changes.tightened.isEmpty)
    #expect(changes.leftOpen.count == 1 && changes.leftOpen[0].hasPrefix(root + ": 2775 left as it is"))
    #expect(try fileMode(root) == 0o2775)

    let own = scratch.path + "/own"
    try FileManager.default.createDirectory(atPath: own, withIntermediateDirectories: true)
    #expect(chmod(own, 0o2775) == 0)
    _ = try DataDirectory(path: own).prepare()
    #expect(try fileMode(own) == 0o2700)  // setgid kept

    #expect(FileManager.default.createFile(atPath: root + "/foreign.db", contents: Data([1])))
    #expect(chown(root + "/foreign.db", 4242, 4242) == 0)
    #expect(chmod(root + "/foreign.db", 0o644) == 0)
    #expect(throws: ConfigError.self) { try DataDirectory(path: root).prepare() }
  }
}
