/// SQL for projects, API keys and admin keys.
public enum ProjectsRepository {
  static let columns = """
    project_id, anonymous_enabled, email_password_enabled, idps_json, auto_cleanup_enabled,
    auto_cleanup_enabled_at_ms, sign_up_quota_per_hour, id_token_ttl_seconds, password_min_length,
    created_at_ms, firebase_project_id, firebase_certs_json, firebase_certs_url, firebase_create_unknown_users,
    cors_origins, authorized_domains, email_enumeration_protection_disabled, email_sender, email_app_name,
    email_templates_json
    """

  static func decode(_ row: Row) throws -> ProjectRecord {
    var project = ProjectRecord(projectID: try row.string(0), createdAtMs: try row.int64(9))
    project.anonymousEnabled = try row.bool(1)
    project.emailPasswordEnabled = try row.bool(2)
    project.idpsJSON = try row.string(3)
    project.autoCleanupEnabled = try row.bool(4)
    project.autoCleanupEnabledAtMs = try row.int64(5)
    project.signUpQuotaPerHour = try row.int64(6)
    project.idTokenTTLSeconds = try row.int64(7)
    project.passwordMinLength = try row.int64(8)
    project.firebaseProjectID = try row.string(10)
    project.firebaseCertsJSON = try row.string(11)
    project.firebaseCertsURL = try row.string(12)
    project.firebaseCreateUnknownUsers = try row.bool(13)
    project.corsOrigins = try row.string(14).split(separator: "\n").map(String.init)
    project.authorizedDomains = try row.string(15).split(separator: "\n").map(String.init)
    project.emailEnumerationProtectionDisabled = try row.bool(16)
    project.emailSender = try row.string(17)
    project.emailAppName = try row.string(18)
    project.emailTemplatesJSON = try row.string(19)
    return project
  }

  static func values(_ p: ProjectRecord) -> [SQLValue] {
    [
      .text(p.projectID), .integer(p.anonymousEnabled ? 1 : 0), .integer(p.emailPasswordEnabled ? 1 : 0),
      .text(p.idpsJSON), .integer(p.autoCleanupEnabled ? 1 : 0), .integer(p.autoCleanupEnabledAtMs),
      .integer(p.signUpQuotaPerHour), .integer(p.idTokenTTLSeconds), .integer(p.passwordMinLength),
      .integer(p.createdAtMs), .text(p.firebaseProjectID), .text(p.firebaseCertsJSON),
      .text(p.firebaseCertsURL),
      .integer(p.firebaseCreateUnknownUsers ? 1 : 0),
      .text(p.corsOrigins.joined(separator: "\n")),
      .text(p.authorizedDomains.joined(separator: "\n")),
      .integer(p.emailEnumerationProtectionDisabled ? 1 : 0),
      .text(p.emailSender), .text(p.emailAppName), .text(p.emailTemplatesJSON),
    ]
  }

  /// Inserts a project; a UNIQUE violation means it exists.
  public static func insert(_ db: Database, _ project: ProjectRecord) throws {
    try db.execute(
      "INSERT INTO projects (\(columns)) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", values(project))
  }

  /// Writes every setting of an existing project.
  public static func update(_ db: Database, _ project: ProjectRecord) throws {
    // Every column but project_id and created_at_ms, then project_id for WHERE.
    let all = values(project)
    let args = Array(all[1...8]) + Array(all[10...19]) + [.text(project.projectID)]
    try db.execute(
      """
      UPDATE projects SET anonymous_enabled = ?, email_password_enabled = ?, idps_json = ?,
        auto_cleanup_enabled = ?, auto_cleanup_enabled_at_ms = ?, sign_up_quota_per_hour = ?,
        id_token_ttl_seconds = ?, password_min_length = ?, firebase_project_id = ?,
        firebase_certs_json = ?, firebase_certs_url = ?, firebase_create_unknown_users = ?,
        cors_origins = ?, authorized_domains = ?, email_enumeration_protection_disabled = ?,
        email_sender = ?, email_app_name = ?, email_templates_json = ?
      WHERE project_id = ?
      """, args)
  }

  public static func get(_ db: Database, _ projectID: String) throws -> ProjectRecord? {
    try db.queryOne("SELECT \(columns) FROM projects WHERE project_id = ?", [.text(projectID)]).map(decode)
  }

  public static func all(_ db: Database) throws -> [ProjectRecord] {
    try db.query("SELECT \(columns) FROM projects ORDER BY project_id").map(decode)
  }

  public static func insertAPIKey(_ db: Database, projectID: String, apiKey: String, nowMs: Int64) throws {
    try db.execute(
      "INSERT INTO api_keys (api_key, project_id, created_at_ms) VALUES (?,?,?)",
      [.text(apiKey), .text(projectID), .integer(nowMs)])
  }

  /// Every (api key, project id) pair, for the in-memory directory.
  public static func allAPIKeys(_ db: Database) throws -> [(apiKey: String, projectID: String)] {
    try db.query("SELECT api_key, project_id FROM api_keys ORDER BY created_at_ms").map {
      (try $0.string(0), try $0.string(1))
    }
  }

  public static func apiKeys(_ db: Database, projectID: String) throws -> [String] {
    try db.query(
      "SELECT api_key FROM api_keys WHERE project_id = ? ORDER BY created_at_ms", [.text(projectID)]
    )
    .map { try $0.string(0) }
  }

  /// Returns whether a key was removed.
  public static func deleteAPIKey(_ db: Database, projectID: String, apiKey: String) throws -> Bool {
    try db.execute(
      "DELETE FROM api_keys WHERE project_id = ? AND api_key = ?", [.text(projectID), .text(apiKey)])
    return db.changes > 0
  }

  public static func insertAdminKey(_ db: Database, keyHash: [UInt8], label: String, nowMs: Int64) throws {
    try db.execute(
      "INSERT INTO admin_keys (key_hash, label, created_at_ms) VALUES (?,?,?)",
      [.blob(keyHash), .text(label), .integer(nowMs)])
  }

  /// Makes `keyHash` the only admin key with `label`: other keys with that label are
  /// deleted, the key is added unless it is there. Returns whether anything changed.
  public static func replaceAdminKey(_ db: Database, label: String, keyHash: [UInt8], nowMs: Int64) throws
    -> Bool
  {
    try db.execute(
      "DELETE FROM admin_keys WHERE label = ? AND key_hash != ?", [.text(label), .blob(keyHash)])
    var changed = db.changes > 0
    try db.execute(
      "INSERT OR IGNORE INTO admin_keys (key_hash, label, created_at_ms) VALUES (?,?,?)",
      [.blob(keyHash), .text(label), .integer(nowMs)])
    changed = changed || db.changes > 0
    return changed
  }

  public static func adminKeyHashes(_ db: Database) throws -> [[UInt8]] {
    try db.query("SELECT key_hash FROM admin_keys").map { try $0.blob(0) }
  }
}
