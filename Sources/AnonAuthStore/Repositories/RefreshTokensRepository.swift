/// SQL for refresh-token sessions (one row per token family, migration 8): start, lookup
/// by a presented token, rotation, grace-window re-issues, family and account revocation.
public enum RefreshTokensRepository {
  /// Sessions an account keeps: a new sign-in beyond it ends the session that refreshed
  /// least recently. Real users have a session per device and browser; 100 leaves room
  /// for many while an account's rows, and with them the work of deleting or revoking it
  /// (one writer job), stay bounded: at most 100 rows of about 300 bytes.
  public static let maxSessionsPerAccount = 100

  /// Bytes of the family id at the front of a key (and of a token since migration 8).
  public static let familyIDBytes = 16
  /// Bytes of a key made since migration 8: the family id, then the token's SHA-256.
  public static let keyBytes = familyIDBytes + 32

  static let table = RefreshSessionRecord.table

  static let insertStatement = table.insert()

  static func decode(_ row: Row) throws -> RefreshSessionRecord { try table.decode(row) }

  /// The part of a key compared with `token_hash` and `previous_hash`: the SHA-256 of a
  /// key made since migration 8, an older key whole.
  static func hashPart(_ key: [UInt8]) -> [UInt8] {
    key.count == keyBytes ? Array(key.suffix(keyBytes - familyIDBytes)) : key
  }

  /// Starts a session with its first token, then ends the account's least recently
  /// refreshed sessions beyond `maxSessionsPerAccount`.
  /// - Returns: how many sessions the cap ended.
  @discardableResult
  public static func insert(_ db: Database, _ r: RefreshTokenRecord) throws -> Int {
    try insertSession(db, r)
    return try endSessionsBeyondCap(
      db, projectID: r.projectID, localID: r.localID, keeping: Array(r.tokenHash.prefix(familyIDBytes)))
  }

  /// Starts the first session of an account created in the same write job: no cap can be
  /// exceeded, so nothing is read back (on the replicated store the insert is pipelined,
  /// and the sign-up saves the round trip of counting the sessions).
  public static func insertFirst(_ db: Database, _ r: RefreshTokenRecord) throws {
    try insertSession(db, r)
  }

  private static func insertSession(_ db: Database, _ r: RefreshTokenRecord) throws {
    // A key of an older form (tests and tools write them) is found by legacy_key.
    let session = RefreshSessionRecord(
      familyID: Array(r.tokenHash.prefix(familyIDBytes)), projectID: r.projectID, localID: r.localID,
      tokenHash: hashPart(r.tokenHash), generation: 0, issuedAtMs: r.issuedAtMs, authTime: r.authTime,
      signInProvider: r.signInProvider, previousHash: nil, rotatedAtMs: 0, successorSealed: nil, reissues: 0,
      legacyKey: r.tokenHash.count == keyBytes ? nil : r.tokenHash)
    try db.executePipelined(insertStatement.sql, insertStatement.arguments(session))
  }

  /// Ends the sessions of an account beyond the cap, least recently refreshed first,
  /// never `keeping` (the session just started). Reads at most cap + 1 index entries.
  static func endSessionsBeyondCap(_ db: Database, projectID: String, localID: String, keeping: [UInt8])
    throws -> Int
  {
    let count = try sessionCount(db, projectID: projectID, localID: localID)
    guard count > maxSessionsPerAccount else { return 0 }
    try db.execute(
      """
      DELETE FROM refresh_sessions WHERE family_id IN (
        SELECT family_id FROM refresh_sessions
        WHERE project_id = ? AND local_id = ? AND family_id != ?
        ORDER BY issued_at_ms, family_id LIMIT ?)
      """,
      [.text(projectID), .text(localID), .blob(keeping), .integer(Int64(count - maxSessionsPerAccount))])
    return db.changes
  }

  public static func sessionCount(_ db: Database, projectID: String, localID: String) throws -> Int {
    try db.queryOne(
      "SELECT count(*) FROM refresh_sessions WHERE project_id = ? AND local_id = ?",
      [.text(projectID), .text(localID)]
    )?.int(0) ?? 0
  }

  /// The session a presented token's key names, and what the token is to it; nil when
  /// no session has it (unknown, revoked, or of a deleted account). A key made since
  /// migration 8 names its family in its first 16 bytes; an older key is looked up whole.
  public static func find(_ db: Database, key: [UInt8]) throws
    -> (session: RefreshSessionRecord, presented: RefreshSessionRecord.Presented)?
  {
    let row =
      key.count == keyBytes
      ? try db.queryOne(
        "SELECT \(table.selection) FROM refresh_sessions WHERE family_id = ?",
        [.blob(Array(key.prefix(familyIDBytes)))])
      : try db.queryOne("SELECT \(table.selection) FROM refresh_sessions WHERE legacy_key = ?", [.blob(key)])
    guard let row else { return nil }
    let session = try decode(row)
    let hash = hashPart(key)
    if hash == session.tokenHash { return (session, .current) }
    if hash == session.previousHash { return (session, .previous) }
    return (session, .older)
  }

  public static func get(_ db: Database, familyID: [UInt8]) throws -> RefreshSessionRecord? {
    try db.queryOne("SELECT \(table.selection) FROM refresh_sessions WHERE family_id = ?", [.blob(familyID)])
      .map(
        decode)
  }

  /// A rotation: `newHash` becomes the live token, the live one the previous, with the
  /// new token sealed for the grace window. One row rewritten, none added.
  public static func rotate(
    _ db: Database, familyID: [UInt8], newHash: [UInt8], atMs: Int64, successorSealed: [UInt8]
  ) throws {
    try db.execute(
      """
      UPDATE refresh_sessions SET previous_hash = token_hash, token_hash = ?, generation = generation + 1,
        issued_at_ms = ?, rotated_at_ms = ?, successor_sealed = ?, reissues = 0
      WHERE family_id = ?
      """, [.blob(newHash), .integer(atMs), .integer(atMs), .blob(successorSealed), .blob(familyID)])
  }

  /// Counts one grace-window re-issue of the live token.
  public static func countReissue(_ db: Database, familyID: [UInt8]) throws {
    try db.execute(
      "UPDATE refresh_sessions SET reissues = reissues + 1 WHERE family_id = ?", [.blob(familyID)])
  }

  /// Drops the sealed successors of rotations before `rotatedBeforeMs` (the reuse grace
  /// window is over: nobody may receive them again). Returns how many rows changed.
  public static func forgetSuccessors(_ db: Database, rotatedBeforeMs: Int64, limit: Int) throws -> Int {
    try db.execute(
      """
      UPDATE refresh_sessions SET successor_sealed = NULL WHERE family_id IN (
        SELECT family_id FROM refresh_sessions
        WHERE successor_sealed IS NOT NULL AND rotated_at_ms < ? LIMIT ?)
      """, [.integer(rotatedBeforeMs), .integer(Int64(limit))])
    return db.changes
  }

  /// Reuse detected: the family stops working. Its row goes: a token of a family that
  /// is not there is refused as `INVALID_REFRESH_TOKEN`, as a revoked one was.
  public static func revokeFamily(_ db: Database, familyID: [UInt8]) throws {
    try db.execute("DELETE FROM refresh_sessions WHERE family_id = ?", [.blob(familyID)])
  }

  /// Every session of an account ends (admin revocation): at most
  /// `maxSessionsPerAccount` rows.
  public static func revokeAccount(_ db: Database, projectID: String, localID: String) throws {
    try db.execute(
      "DELETE FROM refresh_sessions WHERE project_id = ? AND local_id = ?",
      [.text(projectID), .text(localID)])
  }
}
