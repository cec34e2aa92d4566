import AnonAuthWire
import Foundation

/// A signed-in user, shaped like FirebaseAuth's `User`.
public struct User: Sendable {
  let auth: Auth
  public let uid: String
  /// True while no credential is linked.
  public let isAnonymous: Bool

  /// The current ID token, refreshed first when fewer than 5 minutes remain (or always,
  /// with `forceRefresh`), as `getIDToken(forcingRefresh:)` does in the iOS SDK.
  public func getIDToken(forceRefresh: Bool = false) async throws(AuthError) -> String {
    guard let session = auth.currentSession, session.uid == uid else { throw .noCurrentUser }
    let now = Int64(Date().timeIntervalSince1970 * 1000)
    if !forceRefresh && session.expiresAtMs - now > 5 * 60 * 1000 { return session.idToken }
    var request = RefreshTokenRequest()
    request.refreshToken = session.refreshToken
    let response: AuthResponse = try await auth.accounts.refreshToken(request)
    try auth.adopt(response)
    return response.idToken
  }

  /// The account as the server has it.
  public func accountInfo() async throws(AuthError) -> AccountInfo {
    var request = GetAccountInfoRequest()
    request.idToken = try await getIDToken()
    return try await auth.accounts.getAccountInfo(request)
  }

  /// Deletes the account on the server, then signs out.
  public func delete() async throws(AuthError) {
    var request = DeleteAccountRequest()
    request.idToken = try await getIDToken()
    let _: DeleteAccountResponse = try await auth.accounts.deleteAccount(request)
    try auth.signOut()
  }
}
