/// Where an `Auth` keeps its session between runs: `KeychainSessionStore` on Apple
/// platforms, `FileSessionStore` on Linux (and anywhere a file will do),
/// `MemorySessionStore` for a session that ends with the process.
public protocol SessionStore: Sendable {
  /// The saved session, or nil when there is none or it cannot be read.
  func load() -> Session?
  /// Saves the session; nil erases it.
  func save(_ session: Session?) throws
}

/// Keeps the session in memory only: signed out at the end of the process.
public final class MemorySessionStore: SessionStore {
  private let session = Locked<Session?>(nil)
  public init() {}
  public func load() -> Session? { session.withLock { $0 } }
  public func save(_ new: Session?) { session.withLock { $0 = new } }
}
