/// Where an `Auth` keeps its session between runs: `KeychainSessionStore` on Apple
/// platforms and `FileSessionStore` elsewhere (what `Auth` uses unless told otherwise),
/// `MemorySessionStore` for a session that ends with the process.
public protocol SessionStore: Sendable {
  /// The saved session, or nil when none is saved (or what is saved is not a session).
  /// Throws when the store cannot be read now, such as a Keychain before the device's
  /// first unlock: the `Auth` then keeps its last known state and reads again later, and
  /// never takes the failure for "nobody is signed in".
  func load() throws -> Session?
  /// Saves the session; nil erases it.
  func save(_ session: Session?) throws
}

/// A store that can keep the session in a shared access group (`useUserAccessGroup`).
public protocol AccessGroupSessionStore: SessionStore {
  /// The same store, in `accessGroup` (nil: the app's own).
  func withAccessGroup(_ accessGroup: String?) -> any SessionStore
}

/// Why a store could not be read or written.
public enum SessionStoreError: Error, Sendable, Equatable {
  /// Protected data is not available yet (the device has not been unlocked since it
  /// started): try again later.
  case locked
  /// The store failed otherwise; `status` is the platform's code (an `OSStatus`, an
  /// `errno`), 0 when there is none.
  case failed(status: Int32)
}

/// Keeps the session in memory only: signed out at the end of the process.
public final class MemorySessionStore: SessionStore {
  private let session = Locked<Session?>(nil)
  public init() {}
  public func load() -> Session? { session.withLock { $0 } }
  public func save(_ new: Session?) { session.withLock { $0 = new } }
}
