/// SQL the account-linking worker needs beyond the basic account rows: sign-in stamps,
/// password hashes, and removing provider identities.
extension AccountsRepository {
  /// Stamps a sign-in.
  public static func setLastSignIn(_ db: Database, projectID: String, localID: String, atMs: Int64) throws {
    try db.execute(
      "UPDATE accounts SET last_sign_in_at_ms = ? WHERE project_id = ? AND local_id = ?",
      [.integer(atMs), .text(projectID), .text(localID)])
  }

  /// Replaces the password hash (a re-hash with stronger parameters after a sign-in).
  /// Returns whether the account still had `expected` as its hash: a password changed
  /// meanwhile is left alone.
  public static func replacePasswordHash(
    _ db: Database, projectID: String, localID: String, expected: String, with hash: String
  ) throws -> Bool {
    try db.execute(
      "UPDATE accounts SET password_hash = ? WHERE project_id = ? AND local_id = ? AND password_hash = ?",
      [.text(hash), .text(projectID), .text(localID), .text(expected)])
    return db.changes > 0
  }

  /// Removes one provider identity of an account; returns whether it was there.
  public static func deleteIdentity(_ db: Database, projectID: String, localID: String, providerID: String)
    throws -> Bool
  {
    try db.execute(
      "DELETE FROM provider_identities WHERE project_id = ? AND local_id = ? AND provider_id = ?",
      [.text(projectID), .text(localID), .text(providerID)])
    return db.changes > 0
  }

  /// Removes every provider identity of an account (a verified provider identity taking
  /// over an account whose email was never verified); returns how many there were.
  @discardableResult
  public static func deleteIdentities(_ db: Database, projectID: String, localID: String) throws -> Int {
    try db.execute(
      "DELETE FROM provider_identities WHERE project_id = ? AND local_id = ?",
      [.text(projectID), .text(localID)])
    return db.changes
  }
}
