import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The app's face of AnonAuth, shaped like FirebaseAuth's `Auth`: sign in (anonymously
/// first), read `currentUser`, get fresh ID tokens, hear about sign-ins and sign-outs.
/// It speaks Firebase's REST API over HTTPS with `URLSession`, so an app needs nothing
/// but Foundation. Safe to share between tasks and threads.
public final class Auth: Sendable {
  /// Where calls go; `useEmulator` and `languageCode` change it.
  let transport: Locked<RESTTransport>
  let state: Locked<AuthState>

  /// - Parameters:
  ///   - baseURL: where AnonAuth serves HTTPS, e.g. `https://auth.example.com:7443`.
  ///   - apiKey: the project's API key (a public identifier, like a Firebase Web API key).
  ///   - sessionStore: where the session survives between launches; by default the
  ///     Keychain on Apple platforms and a 0600 file elsewhere
  ///     (`Auth.defaultSessionStore(apiKey:)`). `MemorySessionStore()` signs out at exit.
  ///   - urlSession: the session calls go through (pinning, a custom trust delegate).
  public convenience init(
    baseURL: URL, apiKey: String, sessionStore: (any SessionStore)? = nil, urlSession: URLSession = .shared
  ) {
    self.init(
      baseURL: baseURL, apiKey: apiKey,
      sessionStore: sessionStore ?? Self.defaultSessionStore(apiKey: apiKey),
      urlSession: urlSession, unconfigured: false)
  }

  /// `unconfigured`: the stand-in `Auth.auth()` returns before `configure`.
  init(
    baseURL: URL, apiKey: String, sessionStore: any SessionStore, urlSession: URLSession, unconfigured: Bool
  ) {
    self.transport = Locked(
      RESTTransport(
        baseURL: baseURL, apiKey: apiKey, session: urlSession, unconfigured: unconfigured))
    self.state = Locked(AuthState(store: sessionStore))
    state.withLock { state in
      do {
        if let session = try state.store.load() { state.user = User(auth: self, session: session) }
      } catch {
        state.storeUnread = true
      }
    }
  }

  /// The signed-in user, or nil. The same object for as long as the same user is signed
  /// in: links, unlinks, reloads, profile changes and refreshes update it in place. While
  /// the session store cannot be read (a Keychain before first unlock), nil until it can.
  public var currentUser: User? {
    settleStore()
    return state.withLock { $0.user }
  }

  /// The queue listeners and completion handlers are called on: the main queue, as with
  /// FirebaseAuth. A program that runs no main queue (a Linux service, a test) sets its own.
  public var callbackQueue: DispatchQueue {
    get { state.withLock { $0.callbackQueue } }
    set { state.withLock { $0.callbackQueue = newValue } }
  }

  /// The language of the server's user-facing messages (BCP 47), sent with every call.
  public var languageCode: String? {
    get { state.withLock { $0.languageCode } }
    set {
      state.withLock { $0.languageCode = newValue }
      transport.withLock { $0.languageCode = newValue }
    }
  }

  /// Sets `languageCode` to the app's preferred language.
  public func useAppLanguage() {
    languageCode = Locale.preferredLanguages.first
  }

  /// Forgets the session here and in the store. Refresh tokens stay valid on the server
  /// until they are revoked. With nobody signed in it does nothing, as FirebaseAuth:
  /// above all it leaves alone a store that could not be read yet (a locked Keychain),
  /// whose user the app has not seen.
  /// - Throws: `.keychainError` when the store could not erase it (the user is signed
  ///   out here all the same, and the store is erased at the next call).
  public func signOut() throws {
    try replace(nil, when: { $0 != nil })
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

  /// Reads a store that could not be read before, or saves a session that could not be
  /// saved; a store still locked stays as it is, to be tried again at the next call.
  func settleStore() {
    state.withLock { state in
      if state.storeUnread {
        let loaded: Session?
        do {
          loaded = try state.store.load()
        } catch {
          return
        }
        state.storeUnread = false
        guard let loaded, state.user == nil else { return }
        state.user = User(auth: self, session: loaded)
        notify(&state, old: nil, new: loaded)
      } else if state.unsaved {
        if (try? state.store.save(state.user?.session)) != nil { state.unsaved = false }
      }
    }
  }

  /// Makes `new` the session and returns the user: the same `User` updated in place when
  /// the uid stays, a new one otherwise. The session is saved; a store that fails keeps
  /// it in memory and saves it again at the next call, so that an account just made is
  /// never lost to a locked Keychain. Tells the listeners what changed.
  @discardableResult
  func replace(_ new: Session?) throws(AuthError) -> User? {
    try replace(new, when: { _ in true })
  }

  /// `replace` when `condition` holds of the current session, under the same lock.
  @discardableResult
  func replace(_ new: Session?, when condition: (Session?) -> Bool) throws(AuthError) -> User? {
    var failure: AuthError?
    let user = state.withLock { state -> User? in
      let old = state.user?.session
      guard condition(old) else { return state.user }
      do {
        try state.store.save(new)
        state.unsaved = false
      } catch {
        state.unsaved = true
        if new == nil { failure = AuthError(.keychainError, message: "\(error)") }
      }
      // An explicit change of user outranks whatever the unreadable store held.
      state.storeUnread = false
      adopt(&state, new)
      notify(&state, old: old, new: new)
      return state.user
    }
    if let failure { throw failure }
    return user
  }

  /// Makes `session` the current user's (the lock is held): the same `User` object while
  /// the uid stays, so references the app holds see the new tokens; a new one for
  /// another uid; none when signed out.
  func adopt(_ state: inout AuthState, _ session: Session?) {
    if let session {
      if let current = state.user, current.uid == session.uid {
        current.update(session)
      } else {
        state.user = User(auth: self, session: session)
      }
    } else {
      state.user = nil
    }
  }

  /// Queues the calls of the listeners a change concerns on the callback queue, in the
  /// order of the changes (the lock is held): ID-token listeners on any new token or
  /// user, state listeners on a change of user.
  func notify(_ state: inout AuthState, old: Session?, new: Session?) {
    let userChanged = old?.uid != new?.uid
    let tokenChanged = userChanged || old?.idToken != new?.idToken
    guard tokenChanged else { return }
    let listeners = state.listeners.sorted { $0.key < $1.key }.map(\.value).filter {
      $0.kind == .idToken || userChanged
    }
    guard !listeners.isEmpty else { return }
    let user = state.user
    state.callbackQueue.async {
      for listener in listeners { listener.call(self, user) }
    }
  }

  /// Signs out when an error means the session of `uid` is over on the server, as
  /// Firebase's SDKs do; then rethrows it.
  func ending(_ error: AuthError, uid: String) -> AuthError {
    if error.endsSession { _ = try? replace(nil, when: { $0?.uid == uid }) }
    return error
  }
}
