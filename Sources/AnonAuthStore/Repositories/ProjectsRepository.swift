/// SQL for projects, API keys and admin keys.
public enum ProjectsRepository {
  static let table = ProjectRecord.table

  static let insertStatement = table.insert()

  /// Every setting: all columns but the key and the creation time.
  static let updateStatement = table.update(omitting: ["created_at_ms"])

  static func decode(_ row: Row) throws -> ProjectRecord { try table.decode(row) }

  /// Inserts a project; a UNIQUE violation means it exists.
  public static func insert(_ db: Database, _ project: ProjectRecord) throws {
    try db.execute(insertStatement.sql, insertStatement.arguments(project))
  }

  /// Writes every setting of an existing project.
  public static func update(_ db: Database, _ project: ProjectRecord) throws {
    try db.execute(updateStatement.sql, updateStatement.arguments(project))
  }

  public static func get(_ db: Database, _ projectID: String) throws -> ProjectRecord? {
    try db.queryOne("SELECT \(table.selection) FROM projects WHERE project_id = ?", [.text(projectID)]).map(
      decode)
  }

  public static func all(_ db: Database) throws -> [ProjectRecord] {
    try db.query("SELECT \(table.selection) FROM projects ORDER BY project_id").map(decode)
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
