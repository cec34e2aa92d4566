/// What a sign-in or a link returns, as FirebaseAuth's `AuthDataResult`.
public struct AuthDataResult: Sendable {
  public let user: User
  public let additionalUserInfo: AdditionalUserInfo?
}

/// How the user signed in, as FirebaseAuth's `AdditionalUserInfo`.
public struct AdditionalUserInfo: Sendable, Equatable {
  /// The provider of this sign-in or link: "anonymous", "password", "google.com"...
  public let providerID: String
  /// True when this call created the account.
  public let isNewUser: Bool
}
