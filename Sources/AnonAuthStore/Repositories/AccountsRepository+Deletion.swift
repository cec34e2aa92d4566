/// Deleting many accounts in write jobs of bounded size.
extension AccountsRepository {
  /// Deletes accounts from the front of `localIDs` while the job stays within
  /// `maxAccounts` accounts and `maxRows` rows (an account and its refresh sessions,
  /// at most `RefreshTokensRepository.maxSessionsPerAccount`); always at least one.
  /// Counting an account's sessions reads its index entries only.
  /// - Returns: how many accounts existed and were deleted, and how many ids of
  ///   `localIDs` were handled (deleted or unknown); the caller goes on after them.
  public static func deleteBatch(
    _ db: Database, projectID: String, localIDs: ArraySlice<String>, maxAccounts: Int, maxRows: Int
  ) throws -> (deleted: Int, handled: Int) {
    var deleted = 0
    var handled = 0
    var rows = 0
    for localID in localIDs.prefix(max(1, maxAccounts)) {
      let cost = 1 + (try RefreshTokensRepository.sessionCount(db, projectID: projectID, localID: localID))
      if handled > 0 && rows + cost > maxRows { break }
      if try delete(db, projectID: projectID, localID: localID) { deleted += 1 }
      handled += 1
      rows += cost
    }
    return (deleted, handled)
  }
}
