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

extension AccountRecord {
  /// `accounts`: every column, declared once (docs/architecture.md, "Records and columns").
  static let table = TableDefinition<AccountRecord>(
    "accounts", key: ["project_id", "local_id"],
    blank: AccountRecord(projectID: "", localID: "", isAnonymous: false, createdAtMs: 0),
    columns: [
      .text("project_id", \.projectID),
      .text("local_id", \.localID),
      .bool("is_anonymous", \.isAnonymous),
      .optionalText("email", \.email),
      .bool("email_verified", \.emailVerified),
      .text("display_name", \.displayName),
      .optionalText("password_hash", \.passwordHash),
      .bool("disabled", \.disabled),
      .integer("created_at_ms", \.createdAtMs),
      .integer("last_sign_in_at_ms", \.lastSignInAtMs),
      .integer("last_refresh_at_ms", \.lastRefreshAtMs),
      .integer("valid_since", \.validSince),
      .text("custom_claims_json", \.customClaimsJSON),
      .integer("scheduled_deletion_at_ms", \.scheduledDeletionAtMs),
      .text("photo_url", \.photoURL),
    ])
}

extension IdentityRecord {
  /// `provider_identities`: the account it belongs to is the owner, bound by the
  /// repository.
  static let table = TableDefinition<IdentityRecord>(
    "provider_identities", key: ["project_id", "provider_id", "raw_id"], owner: ["project_id", "local_id"],
    blank: IdentityRecord(providerID: "", rawID: ""),
    columns: [
      .text("provider_id", \.providerID),
      .text("raw_id", \.rawID),
      .text("email", \.email),
      .text("display_name", \.displayName),
      .text("photo_url", \.photoURL),
    ])
}
