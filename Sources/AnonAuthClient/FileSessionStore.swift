import Foundation

/// Keeps the session in a JSON file that only its owner can read (0600), in a directory
/// made 0700 when it is created. Works on Linux and macOS; on iOS prefer
/// `KeychainSessionStore`. One process per file.
public struct FileSessionStore: SessionStore {
  public let url: URL

  public init(url: URL) { self.url = url }

  public init(path: String) { self.url = URL(fileURLWithPath: path) }

  /// The next session while it is written; it replaces `url` once complete.
  var pending: URL { url.appendingPathExtension("new") }

  /// A missing file, or one that is not a session, is no session; a file that exists
  /// but cannot be read throws, so that the `Auth` does not take it for a signed-out user.
  public func load() throws -> Session? {
    // A save cut short between removing the old file and moving the new one into place
    // leaves the new one complete under `pending`.
    for candidate in [url, pending] where FileManager.default.fileExists(atPath: candidate.path) {
      let data: Data
      do {
        data = try Data(contentsOf: candidate)
      } catch {
        throw SessionStoreError.failed(status: 0)
      }
      if let session = try? JSONDecoder().decode(Session.self, from: data) { return session }
    }
    return nil
  }

  public func save(_ session: Session?) throws {
    let files = FileManager.default
    guard let session else {
      for candidate in [url, pending] where files.fileExists(atPath: candidate.path) {
        try files.removeItem(at: candidate)
      }
      return
    }
    let data = try JSONEncoder().encode(session)
    let directory = url.deletingLastPathComponent()
    if !files.fileExists(atPath: directory.path) {
      try files.createDirectory(
        at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    }
    // The pending file is made empty and 0600 before the tokens go in, so they are never
    // readable by others (`Data.write(options: .atomic)` would leave them 0644 for a
    // moment, and Linux's Foundation cannot replace a file in one rename).
    if files.fileExists(atPath: pending.path) { try files.removeItem(at: pending) }
    guard files.createFile(atPath: pending.path, contents: nil, attributes: [.posixPermissions: 0o600]) else {
      throw CocoaError(.fileWriteNoPermission)
    }
    try files.setAttributes([.posixPermissions: 0o600], ofItemAtPath: pending.path)
    let handle = try FileHandle(forWritingTo: pending)
    do {
      try handle.write(contentsOf: data)
      try handle.synchronize()
      try handle.close()
    } catch {
      try? handle.close()
      try? files.removeItem(at: pending)
      throw error
    }
    if files.fileExists(atPath: url.path) { try files.removeItem(at: url) }
    try files.moveItem(at: pending, to: url)
  }
}
