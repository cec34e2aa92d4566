import Foundation

/// A signed-in user as it was when read from `Auth`, shaped like FirebaseAuth's `User`.
/// Its calls act on the user while it is the one signed in.
public struct User: Sendable {
  let auth: Auth
  public let uid: String
  /// True while no credential is linked.
  public let isAnonymous: Bool
  public let email: String?
  public let displayName: String?
  /// The linked providers ("password", "google.com"...); empty for an anonymous user.
  public let providerData: [UserInfo]

  init(auth: Auth, session: Session) {
    self.auth = auth
    self.uid = session.uid
    self.isAnonymous = session.isAnonymous
    self.email = session.email
    self.displayName = session.displayName
    self.providerData = session.providerData
  }

  /// The current ID token, refreshed first when fewer than 5 minutes remain (or always,
  /// with `forcingRefresh`). Concurrent callers share one refresh.
  /// - Throws: `.nullUser` (this user is no longer signed in), `.userTokenExpired` and
  ///   `.invalidUserToken` (the session ended on the server; signed out), `.networkError`.
  public func getIDToken(forcingRefresh: Bool = false) async throws(AuthError) -> String {
    try await auth.idToken(of: uid, forcingRefresh: forcingRefresh)
  }

  /// `getIDToken(forcingRefresh:)` under the name FirebaseAuth's Swift API also has.
  public func getIDTokenForcingRefresh(_ forceRefresh: Bool) async throws(AuthError) -> String {
    try await getIDToken(forcingRefresh: forceRefresh)
  }

  /// Reads the user again from the server, and returns it.
  @discardableResult
  public func reload() async throws(AuthError) -> User {
    try await auth.withIDToken(of: uid) { _ throws(AuthError) -> User in
      guard let session = auth.state.withLock({ $0.session }), session.uid == uid else {
        throw AuthError(.nullUser)
      }
      let described = try await auth.describe(session)
      try auth.replace(described, when: { $0?.uid == uid })
      return User(auth: auth, session: described)
    }
  }

  /// Deletes the account on the server, then signs out.
  /// - Throws: `.requiresRecentLogin`, `.userTokenExpired`, `.networkError`.
  public func delete() async throws(AuthError) {
    try await auth.withIDToken(of: uid) { token throws(AuthError) in
      _ = try await auth.rest.accounts("delete", IDTokenBody(idToken: token), as: EmptyReply.self)
    }
    try auth.replace(nil, when: { $0?.uid == uid })
  }
}
