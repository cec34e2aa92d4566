/// What a sign-in or a link returns, as FirebaseAuth's `AuthDataResult`: the user, and
/// whether this call created the account.
public struct AuthDataResult: Sendable {
  public let user: User
  /// True when the call created the account (a first sign-in with a provider, or
  /// `createUser`); false for later sign-ins and for links.
  public let isNewUser: Bool
  /// The provider the user signed in (or linked) with.
  public let providerID: String
}
