/// What an `Auth` holds behind its lock.
struct AuthState: Sendable {
  /// The signed-in user's session, or nil.
  var session: Session?
  /// The state listeners by handle.
  var listeners: [Int: @Sendable (Auth, User?) -> Void] = [:]
  var nextListener = 0
  /// The refresh in flight, if any: every caller who needs a fresh token waits on it
  /// rather than spending the refresh token again.
  var refreshing: (id: Int, task: Task<Session, any Error>)?
  var nextRefresh = 0
}

/// The handle `addStateDidChangeListener` returns, to remove the listener with.
public struct AuthStateDidChangeListenerHandle: Hashable, Sendable {
  let id: Int
}
