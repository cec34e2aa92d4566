extension Auth {
  /// The Keychain access group the session is kept in (nil: the app's own).
  public var userAccessGroup: String? { state.withLock { $0.userAccessGroup } }

  /// Keeps the session in `accessGroup` from now on, so that the app's extensions share
  /// the user, and makes the user saved there the current one, as FirebaseAuth does.
  /// Only a store that has access groups (`KeychainSessionStore`) changes; with any other
  /// the call records the group and changes nothing.
  /// - Throws: `.keychainError` when the group's session cannot be read (then nothing
  ///   changes).
  public func useUserAccessGroup(_ accessGroup: String?) throws {
    try state.withLock { state throws(AuthError) in
      guard let grouped = state.store as? any AccessGroupSessionStore else {
        state.userAccessGroup = accessGroup
        return
      }
      let store = grouped.withAccessGroup(accessGroup)
      let session: Session?
      do {
        session = try store.load()
      } catch {
        throw AuthError(.keychainError, message: "\(error)")
      }
      let old = state.user?.session
      state.store = store
      state.userAccessGroup = accessGroup
      state.storeUnread = false
      state.unsaved = false
      adopt(&state, session)
      notify(&state, old: old, new: session)
    }
  }
}
