import Foundation

/// `accounts:revokeToken`'s body, as FirebaseAuth sends it: Apple's authorization code
/// as a token of type 3.
struct RevokeTokenBody: Encodable {
  var providerId = "apple.com"
  var tokenType = "3"
  var token: String
  var idToken: String
}

extension Auth {
  /// Revokes the signed-in user's Sign in with Apple tokens at Apple, as Apple asks of
  /// apps that delete an account: call it with the authorization code of a fresh Sign in
  /// with Apple (`ASAuthorizationAppleIDCredential.authorizationCode`) before `delete()`.
  /// Does nothing when nobody is signed in, as FirebaseAuth.
  /// - Throws: `.invalidCredential` (Apple refused the code, or could not be reached),
  ///   `.operationNotAllowed` (apple.com is off, or has no revocation key),
  ///   `.userTokenExpired`, `.networkError`.
  public func revokeToken(withAuthorizationCode authorizationCode: String) async throws {
    guard let user = currentUser else { return }
    try await withIDToken(of: user.uid) { token throws(AuthError) in
      _ = try await rest.accounts(
        "revokeToken", RevokeTokenBody(token: authorizationCode, idToken: token), as: EmptyReply.self,
        version: "v2")
    }
  }

  /// `revokeToken(withAuthorizationCode:)` with a completion on the callback queue.
  public func revokeToken(
    withAuthorizationCode authorizationCode: String, completion: (((any Error)?) -> Void)?
  ) {
    deliver(completion) { try await self.revokeToken(withAuthorizationCode: authorizationCode) }
  }
}
