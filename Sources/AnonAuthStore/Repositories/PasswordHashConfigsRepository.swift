/// SQL for the hash configs of imported password hashes. An imported hash names its
/// config by id; the config (Firebase's signer key is a secret) is sealed by the service
/// layer before it gets here.
public enum PasswordHashConfigsRepository {
  /// Stores a config once: the id is a digest of its content, so a second import with the
  /// same config finds it there and changes nothing.
  public static func insert(
    _ db: Database, projectID: String, configID: String, sealed: [UInt8], nowMs: Int64
  ) throws {
    try db.execute(
      """
      INSERT INTO password_hash_configs (project_id, config_id, sealed, created_at_ms) VALUES (?,?,?,?)
      ON CONFLICT(project_id, config_id) DO NOTHING
      """, [.text(projectID), .text(configID), .blob(sealed), .integer(nowMs)])
  }

  public static func get(_ db: Database, projectID: String, configID: String) throws -> [UInt8]? {
    try db.queryOne(
      "SELECT sealed FROM password_hash_configs WHERE project_id = ? AND config_id = ?",
      [.text(projectID), .text(configID)]
    ).map { try $0.blob(0) }
  }
}
