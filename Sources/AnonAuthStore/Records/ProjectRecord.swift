/// A project's settings as stored. Zero in a numeric setting means "the default".
public struct ProjectRecord: Sendable, Equatable {
  public var projectID: String
  public var anonymousEnabled = false
  public var emailPasswordEnabled = false
  /// The identity-provider configs as JSON (the service layer owns their shape).
  public var idpsJSON = "[]"
  public var autoCleanupEnabled = false
  public var autoCleanupEnabledAtMs: Int64 = 0
  public var signUpQuotaPerHour: Int64 = 0
  public var idTokenTTLSeconds: Int64 = 0
  public var passwordMinLength: Int64 = 0
  public var createdAtMs: Int64 = 0
  /// The Firebase project whose ID tokens the session exchange accepts; empty: off.
  public var firebaseProjectID = ""
  /// Google's certificate set inline (tests, air-gapped installs); empty: fetched.
  public var firebaseCertsJSON = ""
  /// Where to fetch the certificate set; empty: Google's URL.
  public var firebaseCertsURL = ""
  /// An exchange for a uid that was not imported makes the account.
  public var firebaseCreateUnknownUsers = false
  /// The origins allowed to call the HTTPS JSON API from a browser (CORS); none by default.
  public var corsOrigins: [String] = []
  /// The hosts an email action's continue URL may name (Firebase's authorized domains).
  public var authorizedDomains: [String] = ["localhost"]
  /// Email actions say whether an address has an account (`EMAIL_NOT_FOUND`); off by
  /// default, as Firebase's email enumeration protection is on by default.
  public var emailEnumerationProtectionDisabled = false
  /// The From of the project's mails; empty: the daemon's.
  public var emailSender = ""
  /// The app's name in the mails; empty: the project id.
  public var emailAppName = ""
  /// The project's own mail texts as JSON (the service layer owns their shape); "[]":
  /// the built-in ones.
  public var emailTemplatesJSON = "[]"

  public init(projectID: String, createdAtMs: Int64) {
    self.projectID = projectID
    self.createdAtMs = createdAtMs
  }
}

extension ProjectRecord {
  /// `projects`, declared once.
  static let table = TableDefinition<ProjectRecord>(
    "projects", key: ["project_id"], blank: ProjectRecord(projectID: "", createdAtMs: 0),
    columns: [
      .text("project_id", \.projectID),
      .bool("anonymous_enabled", \.anonymousEnabled),
      .bool("email_password_enabled", \.emailPasswordEnabled),
      .text("idps_json", \.idpsJSON),
      .bool("auto_cleanup_enabled", \.autoCleanupEnabled),
      .integer("auto_cleanup_enabled_at_ms", \.autoCleanupEnabledAtMs),
      .integer("sign_up_quota_per_hour", \.signUpQuotaPerHour),
      .integer("id_token_ttl_seconds", \.idTokenTTLSeconds),
      .integer("password_min_length", \.passwordMinLength),
      .integer("created_at_ms", \.createdAtMs),
      .text("firebase_project_id", \.firebaseProjectID),
      .text("firebase_certs_json", \.firebaseCertsJSON),
      .text("firebase_certs_url", \.firebaseCertsURL),
      .bool("firebase_create_unknown_users", \.firebaseCreateUnknownUsers),
      .lines("cors_origins", \.corsOrigins),
      .lines("authorized_domains", \.authorizedDomains),
      .bool("email_enumeration_protection_disabled", \.emailEnumerationProtectionDisabled),
      .text("email_sender", \.emailSender),
      .text("email_app_name", \.emailAppName),
      .text("email_templates_json", \.emailTemplatesJSON),
    ])
}
