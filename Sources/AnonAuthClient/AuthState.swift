import Foundation

/// What an `Auth` holds behind its lock.
struct AuthState: Sendable {
  /// The signed-in user, the one object `currentUser` returns and that changes update.
  var user: User?
  /// Where the session survives; `useUserAccessGroup` may replace it.
  var store: any SessionStore
  /// The store could not be read yet (a locked Keychain): it is read again before every
  /// call, and `signInAnonymously` refuses to make a new account meanwhile.
  var storeUnread = false
  /// The session in memory did not reach the store (a locked Keychain): saved again
  /// before every call until it does.
  var unsaved = false
  /// The listeners by handle.
  var listeners: [Int: Listener] = [:]
  var nextListener = 0
  /// Where listeners and completion handlers run.
  var callbackQueue = DispatchQueue.main
  var languageCode: String?
  var userAccessGroup: String?
  /// The refresh in flight, if any: every caller who needs a fresh token waits on it
  /// rather than spending the refresh token again.
  var refreshing: (id: Int, task: Task<Session, any Error>)?
  var nextRefresh = 0

  init(store: any SessionStore) { self.store = store }
}

/// A state or ID-token listener as the app gave it.
///
/// `@unchecked Sendable`: FirebaseAuth's listener type is a plain closure, not
/// `@Sendable`, so that a `@MainActor` app can touch its own state in it. It is only ever
/// called on the `Auth`'s callback queue (the main queue unless the app chose another),
/// one call at a time, never on the thread that registered it concurrently.
struct Listener: @unchecked Sendable {
  enum Kind { case state, idToken }
  let kind: Kind
  let call: (Auth, User?) -> Void
}

/// A completion handler as the app gave it; `@unchecked Sendable` for the reason
/// `Listener` is: it runs once, on the callback queue.
struct Completion<Value>: @unchecked Sendable {
  let call: ((Value?, (any Error)?) -> Void)?
}

/// A completion handler without a value.
struct VoidCompletion: @unchecked Sendable {
  let call: (((any Error)?) -> Void)?
}

/// The handle `addStateDidChangeListener` and `addIDTokenDidChangeListener` return, to
/// remove the listener with (FirebaseAuth's handles are `NSObjectProtocol` too).
final class ListenerHandle: NSObject, Sendable {
  let id: Int
  init(id: Int) { self.id = id }
}

/// FirebaseAuth's name of the handle type.
public typealias AuthStateDidChangeListenerHandle = any NSObjectProtocol

/// FirebaseAuth's name of the ID-token listener's handle type.
public typealias IDTokenDidChangeListenerHandle = any NSObjectProtocol
