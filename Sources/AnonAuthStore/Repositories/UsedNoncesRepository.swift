/// SQL for the nonces of provider ID tokens that already signed in (migration 12): a
/// token whose nonce is here, unexpired, is a replay.
public enum UsedNoncesRepository {
  /// Records `nonceHash` as used until `expiresAtMs`, unless it is already recorded and
  /// not expired at `nowMs`: then the job fails with `refusal()` once it has returned
  /// (decided on the leader, in one statement, as `QuotaRepository.record` does).
  public static func claim(
    _ db: Database, projectID: String, nonceHash: [UInt8], expiresAtMs: Int64, nowMs: Int64,
    else refusal: @escaping @Sendable () -> any Error
  ) throws {
    try db.executePipelined(
      """
      INSERT INTO used_nonces (project_id, nonce_hash, expires_at_ms) VALUES (?1, ?2, ?3)
      ON CONFLICT (project_id, nonce_hash) DO UPDATE SET expires_at_ms = excluded.expires_at_ms
        WHERE used_nonces.expires_at_ms <= ?4
      """, [.text(projectID), .blob(nonceHash), .integer(expiresAtMs), .integer(nowMs)],
      expectingChanges: 1, else: refusal)
  }

  /// Drops up to `limit` nonces expired at `nowMs` (the clean-up pass's). Returns how many
  /// went.
  public static func prune(_ db: Database, nowMs: Int64, limit: Int) throws -> Int {
    try db.execute(
      """
      DELETE FROM used_nonces WHERE (project_id, nonce_hash) IN
        (SELECT project_id, nonce_hash FROM used_nonces WHERE expires_at_ms <= ? LIMIT ?)
      """, [.integer(nowMs), .integer(Int64(limit))])
    return db.changes
  }

  /// How many nonces are recorded (for tests and `/metrics`-style checks).
  public static func count(_ db: Database) throws -> Int64 {
    try db.queryOne("SELECT count(*) FROM used_nonces").map { try $0.int64(0) } ?? 0
  }
}
