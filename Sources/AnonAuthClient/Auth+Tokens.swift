import Foundation

extension Auth {
  /// A token is refreshed when fewer than this many seconds remain, as Firebase's SDKs do.
  static let refreshMargin: TimeInterval = 5 * 60

  /// The ID token of `uid`, refreshed first when it is about to expire or when forced.
  /// Concurrent callers share one refresh.
  func idToken(of uid: String, forcingRefresh: Bool) async throws(AuthError) -> String {
    enum Step {
      case fresh(String)
      case wait(Task<Session, any Error>)
    }
    let step = try state.withLock { state throws(AuthError) -> Step in
      guard let session = state.user?.session, session.uid == uid else { throw AuthError(.nullUser) }
      if let refreshing = state.refreshing { return .wait(refreshing.task) }
      if !forcingRefresh && session.expirationDate.timeIntervalSinceNow > Self.refreshMargin {
        return .fresh(session.idToken)
      }
      let id = state.nextRefresh
      state.nextRefresh += 1
      // The task's own cleanup takes the lock, so it cannot run before `refreshing` is set.
      let task = Task {
        defer { self.state.withLock { if $0.refreshing?.id == id { $0.refreshing = nil } } }
        return try await self.refresh(session)
      }
      state.refreshing = (id, task)
      return .wait(task)
    }
    switch step {
    case .fresh(let token):
      return token
    case .wait(let task):
      do {
        return try await task.value.idToken
      } catch let error as AuthError {
        throw error
      } catch {
        throw AuthError(.internalError, message: "\(error)")
      }
    }
  }

  /// Spends the refresh token of `session` at the token endpoint, and makes the result the
  /// session if the user is still the one signed in. A refused refresh token signs out.
  private func refresh(_ session: Session) async throws(AuthError) -> Session {
    let reply: TokenReply
    do {
      reply = try await rest.refresh(session.refreshToken)
    } catch {
      throw ending(error, uid: session.uid)
    }
    guard let idToken = reply.idToken ?? reply.accessToken else {
      throw AuthError(.internalError, message: "the token endpoint returned no id_token")
    }
    var fresh = session
    fresh.idToken = idToken
    fresh.refreshToken = reply.refreshToken ?? session.refreshToken
    fresh.expirationDate = Date().addingTimeInterval(Self.seconds(reply.expiresIn))
    try replace(fresh, when: { $0?.uid == session.uid && $0?.refreshToken == session.refreshToken })
    return fresh
  }

  /// Runs a call that needs the ID token of `uid`; an answer meaning the session is over
  /// signs the user out.
  func withIDToken<Reply>(
    of uid: String, _ call: (String) async throws(AuthError) -> Reply
  ) async throws(AuthError) -> Reply {
    settleStore()
    let token = try await idToken(of: uid, forcingRefresh: false)
    do {
      return try await call(token)
    } catch {
      throw ending(error, uid: uid)
    }
  }
}
