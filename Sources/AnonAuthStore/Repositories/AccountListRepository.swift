/// SQL for listing and counting accounts: keyset pagination on the primary key, so a
/// page token stays valid and no account is skipped or repeated while others come and go.
public enum AccountListRepository {
  public enum Filter: Sendable {
    case all, anonymous, permanent

    var clause: String {
      switch self {
      case .all: ""
      case .anonymous: " AND is_anonymous = 1"
      case .permanent: " AND is_anonymous = 0"
      }
    }
  }

  /// Up to `limit` accounts after `afterLocalID`, in local-id order.
  public static func page(
    _ db: Database, projectID: String, filter: Filter, afterLocalID: String, limit: Int
  ) throws -> [AccountRecord] {
    try db.query(
      pageQuery(filter: filter), [.text(projectID), .text(afterLocalID), .integer(Int64(limit))]
    ).map(AccountsRepository.decode)
  }

  /// `?` project, after local id, limit. PERMANENT reads the partial index
  /// accounts_permanent, named because the planner, without statistics, takes the
  /// primary key and would step over every anonymous account of the project; ALL and
  /// ANONYMOUS read the primary key in uid order.
  static func pageQuery(filter: Filter) -> String {
    """
    SELECT \(AccountsRepository.table.selection) FROM accounts\(
      filter == .permanent ? " INDEXED BY accounts_permanent" : "")
    WHERE project_id = ? AND local_id > ?\(filter.clause) ORDER BY local_id LIMIT ?
    """
  }

  /// From `account_counts`, which triggers keep exact in every transaction that adds,
  /// deletes or links an account: a row read, where counting the index took seconds at
  /// millions of accounts.
  public static func count(_ db: Database, projectID: String, filter: Filter) throws -> Int64 {
    try db.queryOne(
      "SELECT coalesce(sum(count), 0) FROM account_counts WHERE project_id = ?\(filter.clause)",
      [.text(projectID)]
    ).map { try $0.int64(0) } ?? 0
  }

  /// Makes `account_counts` again from the accounts themselves (after a bulk copy that
  /// bypassed or doubled what the triggers keep); inside the caller's transaction.
  public static func recount(_ db: Database) throws(StoreError) {
    try db.execute("DELETE FROM account_counts")
    try db.execute(
      """
      INSERT INTO account_counts (project_id, is_anonymous, count)
        SELECT project_id, is_anonymous, count(*) FROM accounts GROUP BY project_id, is_anonymous
      """)
  }

  /// Identities of many accounts at once, for a page of results.
  public static func identities(
    _ db: Database, projectID: String, localIDs: [String]
  ) throws -> [String: [IdentityRecord]] {
    var out: [String: [IdentityRecord]] = [:]
    for id in localIDs {
      let list = try AccountsRepository.identities(db, projectID: projectID, localID: id)
      if !list.isEmpty { out[id] = list }
    }
    return out
  }

  /// Sign-ups per day and provider since `sinceDay` ("YYYY-MM-DD").
  public static func signUpsByDay(
    _ db: Database, projectID: String, sinceDay: String
  ) throws -> [(day: String, provider: String, count: Int64)] {
    try db.query(
      "SELECT day, provider, count FROM sign_ups_daily WHERE project_id = ? AND day >= ? ORDER BY day, provider",
      [.text(projectID), .text(sinceDay)]
    ).map { (try $0.string(0), try $0.string(1), try $0.int64(2)) }
  }
}
