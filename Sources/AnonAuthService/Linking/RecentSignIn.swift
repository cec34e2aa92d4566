import AnonAuthCrypto
import AnonAuthStore
import AnonAuthWire

/// The recent-sign-in rule, in one place: a sensitive change to a permanent account
/// (deleting it, linking or unlinking a credential, which is how its email and password
/// change) needs an ID token whose `auth_time` is at most five minutes old. A stolen
/// refresh token never expires, but it only ever mints tokens with the `auth_time` of the
/// sign-in that started its family, so it cannot pass this rule; the thief has to sign in
/// again, which needs the owner's credential.
///
/// Anonymous accounts are exempt, as in Firebase: they have no credential to sign in
/// again with, so their own token is the only proof there can be. The rule is checked
/// once before any work (provider calls, password hashing) and again in the write job
/// against the account as the job reads it, so an account that became permanent
/// meanwhile is judged as permanent.
enum RecentSignIn {
  /// docs/protocol.md §5.1: 5 minutes.
  static var maximumAgeSeconds: Int64 { AccountService.recentSignInSeconds }

  /// The `auth_time` of verified ID-token claims; 0 (too old for anything) when absent.
  static func authTime(_ claims: [String: JSONValue]) -> Int64 {
    claims["auth_time"]?.int64Value ?? 0
  }

  /// - Parameter change: what the caller wants to do, for the message ("deleting this
  ///   account").
  /// - Throws: `CREDENTIAL_TOO_OLD_LOGIN_AGAIN` when `account` is permanent and
  ///   `authTime` is more than five minutes before `nowSeconds`.
  static func require(
    _ account: AccountRecord, authTime: Int64, nowSeconds: Int64, for change: String
  ) throws(RPCError) {
    if account.isAnonymous { return }
    // Checked: auth_time is a claim; one that overflows is as good as none.
    let (age, overflow) = nowSeconds.subtractingReportingOverflow(authTime)
    if overflow || age > maximumAgeSeconds {
      throw RPCError(.credentialTooOld, "\(change) needs a sign-in within the last 5 minutes")
    }
  }
}
