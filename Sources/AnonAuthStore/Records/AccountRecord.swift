/// One account as stored.
public struct AccountRecord: Sendable, Equatable {
  public var projectID: String
  public var localID: String
  public var isAnonymous: Bool
  public var email: String?
  public var emailVerified = false
  public var displayName = ""
  /// scrypt in PHC string format; nil for accounts without a password.
  public var passwordHash: String?
  public var disabled = false
  public var createdAtMs: Int64
  public var lastSignInAtMs: Int64
  public var lastRefreshAtMs: Int64 = 0
  /// Seconds; ID tokens with `iat` before it are revoked.
  public var validSince: Int64 = 0
  public var customClaimsJSON = ""
  /// 0: not scheduled for automatic clean-up.
  public var scheduledDeletionAtMs: Int64 = 0
  /// Kept for accounts brought over from Firebase; AnonAuth itself never sets it.
  public var photoURL = ""

  public init(projectID: String, localID: String, isAnonymous: Bool, createdAtMs: Int64) {
    self.projectID = projectID
    self.localID = localID
    self.isAnonymous = isAnonymous
    self.createdAtMs = createdAtMs
    self.lastSignInAtMs = createdAtMs
  }
}

/// A provider identity linked to an account ("google.com" + the provider's user id).
public struct IdentityRecord: Sendable, Equatable {
  public var providerID: String
  public var rawID: String
  public var email: String
  public var displayName: String
  public var photoURL: String

  public init(
    providerID: String, rawID: String, email: String = "", displayName: String = "", photoURL: String = ""
  ) {
    self.providerID = providerID
    self.rawID = rawID
    self.email = email
    self.displayName = displayName
    self.photoURL = photoURL
  }
}
