import Foundation

/// What a sign-in or a link returns, as FirebaseAuth's `AuthDataResult`.
public struct AuthDataResult: Sendable {
  /// The signed-in user: the same object as `Auth.auth().currentUser`.
  public let user: User
  public let additionalUserInfo: AdditionalUserInfo?
  /// With a provider's sign-in or link: the provider's credential as the server returned
  /// it; nil for email and anonymous sign-ins.
  public let credential: OAuthCredential?

  init(user: User, additionalUserInfo: AdditionalUserInfo?, credential: OAuthCredential? = nil) {
    self.user = user
    self.additionalUserInfo = additionalUserInfo
    self.credential = credential
  }
}

/// How the user signed in, as FirebaseAuth's `AdditionalUserInfo`.
///
/// `@unchecked Sendable`: every property is an immutable `let`; `profile` holds only what
/// `JSONSerialization` makes, which nothing mutates after the parse.
public final class AdditionalUserInfo: @unchecked Sendable, Equatable {
  /// The provider of this sign-in or link: "anonymous", "password", "google.com"...
  public let providerID: String
  /// True when this call created the account.
  public let isNewUser: Bool
  /// The provider's profile of the user (its `rawUserInfo`), when it sent one.
  public let profile: [String: Any]?
  /// The user's name at the provider (`screenName`), when it has one.
  public let username: String?

  init(providerID: String, isNewUser: Bool, profile: [String: Any]? = nil, username: String? = nil) {
    self.providerID = providerID
    self.isNewUser = isNewUser
    self.profile = profile
    self.username = username
  }

  public static func == (lhs: AdditionalUserInfo, rhs: AdditionalUserInfo) -> Bool {
    lhs.providerID == rhs.providerID && lhs.isNewUser == rhs.isNewUser && lhs.username == rhs.username
  }
}
