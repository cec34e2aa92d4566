/// One session (refresh-token family) as stored since migration 8: its live token's
/// SHA-256, the previous token's for the reuse grace window, and nothing of older
/// generations, so a session's size does not depend on how often it refreshed.
public struct RefreshSessionRecord: Sendable, Equatable {
  /// 16 bytes: the family's start in ms (6 bytes) then random; tokens carry it.
  public var familyID: [UInt8]
  public var projectID: String
  public var localID: String
  /// SHA-256 of the live token (for a session carried over from before migration 8 and
  /// not refreshed since: the old key).
  public var tokenHash: [UInt8]
  /// Rotations since the session started.
  public var generation: Int64
  /// When the live token was issued (revocation by `valid_since` compares this).
  public var issuedAtMs: Int64
  public var authTime: Int64
  public var signInProvider: String
  /// The token the last rotation replaced, and when: within the grace window it gets
  /// the live token again (`successorSealed`); after it, it is reuse.
  public var previousHash: [UInt8]?
  public var rotatedAtMs: Int64
  /// The live token sealed under the master key, kept for the grace window only.
  public var successorSealed: [UInt8]?
  /// How many times the grace window re-issued the live token since the last rotation.
  public var reissues: Int64
  /// The key of the token this session was carried over with (migration 8), by which a
  /// token of the older forms finds it; nil for sessions started since.
  public var legacyKey: [UInt8]?

  /// What a presented token is to its session.
  public enum Presented: Sendable, Equatable {
    /// The live token: it rotates.
    case current
    /// The token the last rotation replaced: the grace window, or reuse after it.
    case previous
    /// An older generation (or a forged one that names the family): reuse.
    case older
  }
}

extension RefreshSessionRecord {
  /// `refresh_sessions`, declared once.
  static let table = TableDefinition<RefreshSessionRecord>(
    "refresh_sessions", key: ["family_id"],
    blank: RefreshSessionRecord(
      familyID: [], projectID: "", localID: "", tokenHash: [], generation: 0, issuedAtMs: 0, authTime: 0,
      signInProvider: "", previousHash: nil, rotatedAtMs: 0, successorSealed: nil, reissues: 0, legacyKey: nil
    ),
    columns: [
      .blob("family_id", \.familyID),
      .text("project_id", \.projectID),
      .text("local_id", \.localID),
      .blob("token_hash", \.tokenHash),
      .integer("generation", \.generation),
      .integer("issued_at_ms", \.issuedAtMs),
      .integer("auth_time", \.authTime),
      .text("sign_in_provider", \.signInProvider),
      .optionalBlob("previous_hash", \.previousHash),
      .integer("rotated_at_ms", \.rotatedAtMs),
      .optionalBlob("successor_sealed", \.successorSealed),
      .integer("reissues", \.reissues),
      .optionalBlob("legacy_key", \.legacyKey),
    ])
}
