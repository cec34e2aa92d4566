import Foundation

/// What a signed-in `Auth` keeps between runs: the tokens, and the user as the server
/// last described it.
public struct Session: Codable, Sendable, Equatable {
  public var uid: String
  public var idToken: String
  public var refreshToken: String
  /// When `idToken` expires.
  public var expirationDate: Date
  public var isAnonymous: Bool
  public var email: String?
  public var displayName: String?
  public var providerData: [UserInfo]

  public init(
    uid: String, idToken: String, refreshToken: String, expirationDate: Date, isAnonymous: Bool,
    email: String? = nil, displayName: String? = nil, providerData: [UserInfo] = []
  ) {
    self.uid = uid
    self.idToken = idToken
    self.refreshToken = refreshToken
    self.expirationDate = expirationDate
    self.isAnonymous = isAnonymous
    self.email = email
    self.displayName = displayName
    self.providerData = providerData
  }
}

/// One provider linked to a user, as FirebaseAuth's `UserInfo`.
public struct UserInfo: Codable, Sendable, Equatable {
  /// "password", "google.com", "facebook.com", "oidc.<name>".
  public var providerID: String
  /// The user's id at the provider (the email for "password").
  public var uid: String
  public var email: String?
  public var displayName: String?

  public init(providerID: String, uid: String, email: String? = nil, displayName: String? = nil) {
    self.providerID = providerID
    self.uid = uid
    self.email = email
    self.displayName = displayName
  }
}
