import Foundation

extension Auth {
  /// Calls `listener` with the current user soon after it is added, then after every
  /// sign-in, sign-out and change of user (not on token refreshes or links, which keep
  /// the uid), always asynchronously on `callbackQueue` (the main queue), as FirebaseAuth.
  /// - Returns: the handle to remove it with.
  @discardableResult
  public func addStateDidChangeListener(
    _ listener: @escaping (Auth, User?) -> Void
  ) -> any NSObjectProtocol {
    add(Listener(kind: .state, call: listener))
  }

  public func removeStateDidChangeListener(_ listenerHandle: any NSObjectProtocol) {
    remove(listenerHandle)
  }

  /// As `addStateDidChangeListener`, and also after every new ID token of the same user
  /// (refresh, link, password change).
  @discardableResult
  public func addIDTokenDidChangeListener(
    _ listener: @escaping (Auth, User?) -> Void
  ) -> any NSObjectProtocol {
    add(Listener(kind: .idToken, call: listener))
  }

  public func removeIDTokenDidChangeListener(_ listenerHandle: any NSObjectProtocol) {
    remove(listenerHandle)
  }

  /// The current user, then every change of user, as an async sequence, as FirebaseAuth's
  /// `authStateChanges`: `for await user in auth.authStateChanges { ... }`. Ends when the
  /// task that iterates it is cancelled. Its values arrive through the callback queue.
  public var authStateChanges: AsyncStream<User?> { changes(of: .state) }

  /// The current user, then every new ID token or change of user, as an async sequence,
  /// as FirebaseAuth's `idTokenChanges`.
  public var idTokenChanges: AsyncStream<User?> { changes(of: .idToken) }

  private func changes(of kind: Listener.Kind) -> AsyncStream<User?> {
    AsyncStream { continuation in
      let handle = add(Listener(kind: kind, call: { _, user in continuation.yield(user) }))
      let box = HandleBox(handle: handle)
      continuation.onTermination = { [weak self] _ in self?.remove(box.handle) }
    }
  }

  private func add(_ listener: Listener) -> any NSObjectProtocol {
    settleStore()
    return state.withLock { state in
      let handle = ListenerHandle(id: state.nextListener)
      state.nextListener += 1
      state.listeners[handle.id] = listener
      let user = state.user
      state.callbackQueue.async { listener.call(self, user) }
      return handle
    }
  }

  private func remove(_ listenerHandle: any NSObjectProtocol) {
    guard let handle = listenerHandle as? ListenerHandle else { return }
    _ = state.withLock { $0.listeners.removeValue(forKey: handle.id) }
  }
}

/// A listener handle carried into a `@Sendable` termination handler; handles are
/// immutable `ListenerHandle`s, so sharing one is safe (`@unchecked` because the
/// protocol existential is not known to be Sendable).
private struct HandleBox: @unchecked Sendable {
  let handle: any NSObjectProtocol
}
