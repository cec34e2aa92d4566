import Foundation

/// Keeps the session in a JSON file that only its owner can read (0600), in a directory
/// made 0700 when it is created. Works on Linux and macOS; on iOS prefer
/// `KeychainSessionStore`.
public struct FileSessionStore: SessionStore {
  public let url: URL

  public init(url: URL) { self.url = url }

  public init(path: String) { self.url = URL(fileURLWithPath: path) }

  public func load() -> Session? {
    guard let data = try? Data(contentsOf: url) else { return nil }
    return try? JSONDecoder().decode(Session.self, from: data)
  }

  public func save(_ session: Session?) throws {
    let files = FileManager.default
    guard let session else {
      if files.fileExists(atPath: url.path) { try files.removeItem(at: url) }
      return
    }
    let data = try JSONEncoder().encode(session)
    let directory = url.deletingLastPathComponent()
    if !files.fileExists(atPath: directory.path) {
      try files.createDirectory(
        at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    }
    // The temporary file is made empty and 0600 before the tokens go in, so they are never
    // readable by others; it then replaces the old file whole, never half-written.
    let temporary = directory.appendingPathComponent(".\(url.lastPathComponent).\(UUID().uuidString)")
    guard files.createFile(atPath: temporary.path, contents: nil, attributes: [.posixPermissions: 0o600])
    else { throw CocoaError(.fileWriteNoPermission) }
    do {
      try files.setAttributes([.posixPermissions: 0o600], ofItemAtPath: temporary.path)
      let handle = try FileHandle(forWritingTo: temporary)
      defer { try? handle.close() }
      try handle.write(contentsOf: data)
      try handle.synchronize()
      if files.fileExists(atPath: url.path) {
        _ = try files.replaceItemAt(url, withItemAt: temporary)
      } else {
        try files.moveItem(at: temporary, to: url)
      }
    } catch {
      try? files.removeItem(at: temporary)
      throw error
    }
  }
}
