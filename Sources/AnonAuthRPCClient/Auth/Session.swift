import Foundation
import Glibc
import Synchronization

/// What a signed-in client keeps: enough to mint fresh ID tokens without signing in again.
public struct Session: Codable, Sendable, Equatable {
  public var uid: String
  public var idToken: String
  public var refreshToken: String
  /// Milliseconds since the epoch when `idToken` expires.
  public var expiresAtMs: Int64
  public var isAnonymous: Bool
  public var signInProvider: String
  public var email: String

  public init(
    uid: String, idToken: String, refreshToken: String, expiresAtMs: Int64, isAnonymous: Bool,
    signInProvider: String, email: String = ""
  ) {
    self.uid = uid
    self.idToken = idToken
    self.refreshToken = refreshToken
    self.expiresAtMs = expiresAtMs
    self.isAnonymous = isAnonymous
    self.signInProvider = signInProvider
    self.email = email
  }
}

/// Where an `Auth` keeps its session between runs (FirebaseAuth keeps it in the keychain).
public protocol SessionStore: Sendable {
  func load() -> Session?
  func save(_ session: Session?) throws
}

/// Keeps the session in memory only: signed out at the end of the process.
public final class MemorySessionStore: SessionStore {
  private let session = Mutex<Session?>(nil)
  public init() {}
  public func load() -> Session? { session.withLock { $0 } }
  public func save(_ new: Session?) { session.withLock { $0 = new } }
}

/// Keeps the session in a JSON file readable by its owner only (0600): the CLI's store.
public struct FileSessionStore: SessionStore {
  public let path: String

  public init(path: String) { self.path = path }

  public func load() -> Session? {
    guard let data = FileManager.default.contents(atPath: path) else { return nil }
    return try? JSONDecoder().decode(Session.self, from: data)
  }

  public func save(_ session: Session?) throws {
    guard let session else {
      try? FileManager.default.removeItem(atPath: path)
      return
    }
    let data = try JSONEncoder().encode(session)
    let directory = (path as NSString).deletingLastPathComponent
    if !directory.isEmpty {
      try FileManager.default.createDirectory(
        atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    }
    // Written to a 0600 temporary file and renamed over the old one: never readable by
    // others, never half-written.
    let temp = path + ".tmp-\(getpid())"
    let fd = open(temp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
    guard fd >= 0 else { throw CocoaError(.fileWriteNoPermission) }
    let bytes = Array(data)
    var written = 0
    while written < bytes.count {
      let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress.map { $0 + written }, bytes.count - written) }
      if n <= 0 { break }
      written += n
    }
    fchmod(fd, 0o600)
    close(fd)
    guard written == bytes.count, rename(temp, path) == 0 else {
      unlink(temp)
      throw CocoaError(.fileWriteUnknown)
    }
  }
}
