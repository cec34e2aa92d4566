/// SQL for refresh tokens: lookup by hash, rotation, family and account revocation.
public enum RefreshTokensRepository {
  static let columns = """
    token_hash, project_id, local_id, family_id, issued_at_ms, auth_time, sign_in_provider, rotated_at_ms,
    successor_sealed, revoked
    """

  static func decode(_ row: Row) throws -> RefreshTokenRecord {
    var r = RefreshTokenRecord(
      tokenHash: try row.blob(0), projectID: try row.string(1), localID: try row.string(2),
      familyID: try row.string(3), issuedAtMs: try row.int64(4), authTime: try row.int64(5),
      signInProvider: try row.string(6))
    r.rotatedAtMs = try row.int64(7)
    r.successorSealed = try row.optionalBlob(8)
    r.revoked = try row.bool(9)
    return r
  }

  public static func insert(_ db: Database, _ r: RefreshTokenRecord) throws {
    try db.execute(
      "INSERT INTO refresh_tokens (\(columns)) VALUES (?,?,?,?,?,?,?,?,?,?)",
      [
        .blob(r.tokenHash), .text(r.projectID), .text(r.localID), .text(r.familyID), .integer(r.issuedAtMs),
        .integer(r.authTime), .text(r.signInProvider), .integer(r.rotatedAtMs),
        r.successorSealed.map { .blob($0) } ?? .null, .integer(r.revoked ? 1 : 0),
      ])
  }

  public static func get(_ db: Database, tokenHash: [UInt8]) throws -> RefreshTokenRecord? {
    try db.queryOne("SELECT \(columns) FROM refresh_tokens WHERE token_hash = ?", [.blob(tokenHash)]).map(
      decode)
  }

  /// Marks a token rotated, keeping its sealed successor for the grace window.
  public static func markRotated(_ db: Database, tokenHash: [UInt8], atMs: Int64, successorSealed: [UInt8])
    throws
  {
    try db.execute(
      "UPDATE refresh_tokens SET rotated_at_ms = ?, successor_sealed = ? WHERE token_hash = ?",
      [.integer(atMs), .blob(successorSealed), .blob(tokenHash)])
  }

  /// Drops the sealed successors of tokens rotated before `beforeMs` (the reuse grace
  /// window is over: nobody may receive them again). Returns how many rows changed.
  public static func forgetSuccessors(_ db: Database, rotatedBeforeMs: Int64, limit: Int) throws -> Int {
    try db.execute(
      """
      UPDATE refresh_tokens SET successor_sealed = NULL WHERE token_hash IN (
        SELECT token_hash FROM refresh_tokens
        WHERE rotated_at_ms > 0 AND rotated_at_ms < ? AND successor_sealed IS NOT NULL LIMIT ?)
      """, [.integer(rotatedBeforeMs), .integer(Int64(limit))])
    return db.changes
  }

  /// Deletes rotated tokens of revoked families rotated before `beforeMs`. A replay of
  /// one is refused as `INVALID_REFRESH_TOKEN` whether the row is there or not; rotated
  /// tokens of live families stay, because their replay must still revoke the family
  /// (PROTOCOL.md section 2).
  public static func deleteRevokedRotated(_ db: Database, rotatedBeforeMs: Int64, limit: Int) throws -> Int {
    try db.execute(
      """
      DELETE FROM refresh_tokens WHERE token_hash IN (
        SELECT token_hash FROM refresh_tokens
        WHERE rotated_at_ms > 0 AND rotated_at_ms < ? AND revoked = 1 LIMIT ?)
      """, [.integer(rotatedBeforeMs), .integer(Int64(limit))])
    return db.changes
  }

  /// Reuse detected: every token of the family stops working. A family never leaves its
  /// account, so the account's index, keyed by the family too, finds exactly its tokens
  /// (migration 7).
  public static func revokeFamily(_ db: Database, projectID: String, localID: String, familyID: String) throws
  {
    try db.execute(revokeFamilySQL, [.text(projectID), .text(localID), .text(familyID)])
  }

  static let revokeFamilySQL = """
    UPDATE refresh_tokens SET revoked = 1, successor_sealed = NULL
    WHERE project_id = ? AND local_id = ? AND family_id = ?
    """

  /// Every refresh token of an account stops working (admin revocation, disable).
  public static func revokeAccount(_ db: Database, projectID: String, localID: String) throws {
    try db.execute(
      "UPDATE refresh_tokens SET revoked = 1, successor_sealed = NULL WHERE project_id = ? AND local_id = ?",
      [.text(projectID), .text(localID)])
  }
}
