/// SQL the Firebase session exchange needs beyond the basic account rows.
extension AccountsRepository {
  /// Sets the account's photo URL (the `picture` of the Firebase ID token an account was
  /// made from). Returns whether the account exists.
  @discardableResult
  public static func setPhotoURL(_ db: Database, projectID: String, localID: String, photoURL: String) throws
    -> Bool
  {
    try db.execute(
      "UPDATE accounts SET photo_url = ? WHERE project_id = ? AND local_id = ?",
      [.text(photoURL), .text(projectID), .text(localID)])
    return db.changes > 0
  }

  /// The account's photo URL; nil when the account does not exist.
  public static func photoURL(_ db: Database, projectID: String, localID: String) throws -> String? {
    try db.queryOne(
      "SELECT photo_url FROM accounts WHERE project_id = ? AND local_id = ?",
      [.text(projectID), .text(localID)]
    ).map { try $0.string(0) }
  }
}
