import Foundation

extension User {
  /// The current ID token, refreshed first when fewer than 5 minutes remain (or always,
  /// with `forcingRefresh`). Concurrent callers share one refresh.
  /// - Throws: `.nullUser` (this user is no longer signed in), `.userTokenExpired` and
  ///   `.invalidUserToken` (the session ended on the server; signed out), `.networkError`.
  public func getIDToken(forcingRefresh: Bool = false) async throws -> String {
    try await auth.idToken(of: uid, forcingRefresh: forcingRefresh)
  }

  /// `getIDToken(forcingRefresh:)` under FirebaseAuth's other Swift name.
  public func idTokenForcingRefresh(_ forceRefresh: Bool) async throws -> String {
    try await getIDToken(forcingRefresh: forceRefresh)
  }

  /// `getIDToken(forcingRefresh:)` under this library's earlier name.
  public func getIDTokenForcingRefresh(_ forceRefresh: Bool) async throws -> String {
    try await getIDToken(forcingRefresh: forceRefresh)
  }

  /// The ID token with what it says: its claims (custom ones included), the sign-in
  /// provider and its dates.
  /// - Throws: as `getIDToken`, and `.malformedJWT` for a token that is not a JWT.
  public func getIDTokenResult(forcingRefresh: Bool = false) async throws -> AuthTokenResult {
    let token = try await auth.idToken(of: uid, forcingRefresh: forcingRefresh)
    return try AuthTokenResult(token: token)
  }

  public func getIDToken(completion: ((String?, (any Error)?) -> Void)?) {
    getIDTokenForcingRefresh(false, completion: completion)
  }

  public func getIDTokenForcingRefresh(_ forceRefresh: Bool, completion: ((String?, (any Error)?) -> Void)?) {
    deliver(completion) { try await self.getIDToken(forcingRefresh: forceRefresh) }
  }

  public func getIDTokenResult(completion: ((AuthTokenResult?, (any Error)?) -> Void)?) {
    getIDTokenResult(forcingRefresh: false, completion: completion)
  }

  public func getIDTokenResult(
    forcingRefresh: Bool, completion: ((AuthTokenResult?, (any Error)?) -> Void)?
  ) {
    deliver(completion) { try await self.getIDTokenResult(forcingRefresh: forcingRefresh) }
  }
}
