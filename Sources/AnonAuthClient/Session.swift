import Foundation

/// What a signed-in `Auth` keeps between runs: the tokens, and the user as the server
/// last described it. Fields added later are optional, so older sessions still load.
public struct Session: Codable, Sendable, Equatable {
  public var uid: String
  public var idToken: String
  public var refreshToken: String
  /// When `idToken` expires.
  public var expirationDate: Date
  public var isAnonymous: Bool
  public var email: String?
  public var displayName: String?
  public var providerData: [ProviderUserInfo]
  public var photoURL: URL?
  public var phoneNumber: String?
  public var emailVerified: Bool?
  /// `createdAt` and `lastLoginAt` of `accounts:lookup`.
  public var creationDate: Date?
  public var lastSignInDate: Date?

  public init(
    uid: String, idToken: String, refreshToken: String, expirationDate: Date, isAnonymous: Bool,
    email: String? = nil, displayName: String? = nil, providerData: [ProviderUserInfo] = []
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

/// What FirebaseAuth's `UserInfo` protocol describes: a user as one provider knows them.
/// `User` is one (its provider is "Firebase"); `providerData` holds the others.
public protocol UserInfo: Sendable {
  /// "password", "google.com", "facebook.com", "oidc.<name>"; "Firebase" for a `User`.
  var providerID: String { get }
  /// The user's id at the provider (the email for "password").
  var uid: String { get }
  var displayName: String? { get }
  var photoURL: URL? { get }
  var email: String? { get }
  var phoneNumber: String? { get }
}

/// One provider linked to a user, as `accounts:lookup` lists it.
public struct ProviderUserInfo: UserInfo, Codable, Sendable, Equatable {
  public var providerID: String
  public var uid: String
  public var email: String?
  public var displayName: String?
  public var photoURL: URL?
  public var phoneNumber: String?

  public init(
    providerID: String, uid: String, email: String? = nil, displayName: String? = nil, photoURL: URL? = nil,
    phoneNumber: String? = nil
  ) {
    self.providerID = providerID
    self.uid = uid
    self.email = email
    self.displayName = displayName
    self.photoURL = photoURL
    self.phoneNumber = phoneNumber
  }
}
