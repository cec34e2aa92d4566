/// SQL for the server-wide signing keys.
public enum SigningKeysRepository {
  static let table = SigningKeyRecord.table

  static let insertStatement = table.insert()

  static func decode(_ row: Row) throws -> SigningKeyRecord { try table.decode(row) }

  public static func insert(_ db: Database, _ k: SigningKeyRecord) throws {
    try db.execute(insertStatement.sql, insertStatement.arguments(k))
  }

  /// Keys still published at `nowMs`: the active one and retired ones with live tokens.
  public static func published(_ db: Database, nowMs: Int64) throws -> [SigningKeyRecord] {
    try db.query(
      "SELECT \(table.selection) FROM signing_keys WHERE retired_at_ms = 0 OR publish_until_ms > ? ORDER BY created_at_ms, kid",
      [.integer(nowMs)]
    ).map(decode)
  }

  /// Retires every key that signs or is to sign after `atMs` (one whose retirement was
  /// already set later, by a rotation `atMs` overtakes, included), publishing each until
  /// `publishUntilMs`.
  public static func retireActive(_ db: Database, atMs: Int64, publishUntilMs: Int64) throws {
    try db.execute(
      "UPDATE signing_keys SET retired_at_ms = ?, publish_until_ms = ? WHERE retired_at_ms = 0 OR retired_at_ms > ?",
      [.integer(atMs), .integer(publishUntilMs), .integer(atMs)])
  }

  /// Forgets keys whose last token has expired.
  public static func deleteExpired(_ db: Database, nowMs: Int64) throws {
    try db.execute(
      "DELETE FROM signing_keys WHERE retired_at_ms > 0 AND publish_until_ms <= ?", [.integer(nowMs)])
  }
}
