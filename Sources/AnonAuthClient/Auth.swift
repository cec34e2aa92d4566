import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The app's face of AnonAuth, shaped like FirebaseAuth's `Auth`: sign in (anonymously
/// first), read `currentUser`, get fresh ID tokens, hear about sign-ins and sign-outs.
/// It speaks Firebase's REST API over HTTPS with `URLSession`, so an app needs nothing
/// but Foundation. Safe to share between tasks and threads.
public final class Auth: Sendable {
  /// Where calls go; `useEmulator` changes it.
  let transport: Locked<RESTTransport>
  let store: any SessionStore
  let state: Locked<AuthState>

  /// - Parameters:
  ///   - baseURL: where AnonAuth serves HTTPS, e.g. `https://auth.example.com:7443`.
  ///   - apiKey: the project's API key (a public identifier, like a Firebase Web API key).
  ///   - sessionStore: where the session survives between launches; memory only by
  ///     default (`KeychainSessionStore` on Apple platforms, `FileSessionStore` on Linux).
  ///   - urlSession: the session calls go through.
  public convenience init(
    baseURL: URL, apiKey: String, sessionStore: any SessionStore = MemorySessionStore(),
    urlSession: URLSession = .shared
  ) {
    self.init(
      baseURL: baseURL, apiKey: apiKey, sessionStore: sessionStore, urlSession: urlSession,
      unconfigured: false)
  }

  /// `unconfigured`: the stand-in `Auth.auth()` returns before `configure`.
  init(
    baseURL: URL, apiKey: String, sessionStore: any SessionStore, urlSession: URLSession, unconfigured: Bool
  ) {
    self.transport = Locked(
      RESTTransport(
        baseURL: baseURL, apiKey: apiKey, session: urlSession, unconfigured: unconfigured))
    self.store = sessionStore
    self.state = Locked(AuthState(session: sessionStore.load()))
  }

  /// The signed-in user, or nil.
  public var currentUser: User? {
    state.withLock { $0.session }.map { User(auth: self, session: $0) }
  }

  /// Forgets the session here and in the store. Refresh tokens stay valid on the server
  /// until they are revoked.
  public func signOut() throws(AuthError) {
    try replace(nil)
  }

  /// Calls `listener` now with the current user, then after every sign-in, sign-out and
  /// change of user (not on token refreshes), on the thread that made the change. Hop to
  /// the main actor inside it to touch the UI.
  @discardableResult
  public func addStateDidChangeListener(
    _ listener: @escaping @Sendable (Auth, User?) -> Void
  ) -> AuthStateDidChangeListenerHandle {
    let (handle, session) = state.withLock { state in
      let id = state.nextListener
      state.nextListener += 1
      state.listeners[id] = listener
      return (AuthStateDidChangeListenerHandle(id: id), state.session)
    }
    listener(self, session.map { User(auth: self, session: $0) })
    return handle
  }

  public func removeStateDidChangeListener(_ handle: AuthStateDidChangeListenerHandle) {
    _ = state.withLock { $0.listeners.removeValue(forKey: handle.id) }
  }

  /// Points this `Auth` at an AnonAuth emulator listener (`--firebase-emulator-listen`),
  /// or Firebase's Auth Emulator, as FirebaseAuth's `useEmulator(withHost:port:)` does:
  /// plain `http://host:port` in the emulator's URL layout. For development only; call it
  /// before the first sign-in.
  public func useEmulator(withHost host: String, port: Int) {
    transport.withLock { $0.useEmulator(host: host, port: port) }
  }

  // MARK: Internals shared with User and the sign-ins

  /// The transport as it is now.
  var rest: RESTTransport { transport.withLock { $0 } }

  /// Makes `new` the session, saved first (a store that fails leaves the old session in
  /// place, except that signing out always happens), then tells the listeners when the
  /// user changed.
  func replace(_ new: Session?) throws(AuthError) {
    try replace(new, when: { _ in true })
  }

  /// `replace` when `condition` holds of the current session, under the same lock.
  func replace(_ new: Session?, when condition: (Session?) -> Bool) throws(AuthError) {
    var failure: AuthError?
    typealias Listener = @Sendable (Auth, User?) -> Void
    let (changed, listeners) = state.withLock { state -> (Bool, [Listener]) in
      guard condition(state.session) else { return (false, []) }
      do {
        try store.save(new)
      } catch {
        failure = AuthError(.keychainError, message: "\(error)")
        if new != nil { return (false, []) }
      }
      let old = state.session
      state.session = new
      return (old?.uid != new?.uid, state.listeners.sorted { $0.key < $1.key }.map(\.value))
    }
    if changed {
      let user = new.map { User(auth: self, session: $0) }
      for listener in listeners { listener(self, user) }
    }
    if let failure { throw failure }
  }

  /// Signs out when an error means the session of `uid` is over on the server, as
  /// Firebase's SDKs do; then rethrows it.
  func ending(_ error: AuthError, uid: String) -> AuthError {
    if error.endsSession { try? replace(nil, when: { $0?.uid == uid }) }
    return error
  }
}
