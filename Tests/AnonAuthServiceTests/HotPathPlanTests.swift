import AnonAuthService
import AnonAuthStore
import AnonAuthWire
import Testing

/// No hot path has a cost that grows with the data: every statement the hot paths issue
/// (recorded by `StatementLog` while they run through the service on a real SQLite
/// file, so no SQL is copied by hand) is planned by SQLite without a full scan and
/// without a range search, apart from the exceptions below, each with its bound (also
/// in docs/architecture.md, "Hot paths and the data").
@Suite("Hot paths: no statement's cost grows with the data")
struct HotPathPlanTests {
  /// Range searches allowed: a piece of the statement's SQL, a piece of the plan's step,
  /// and why the rows it reads are bounded.
  static let boundedRanges: [(sql: String, step: String, bound: String)] = [
    (
      "sign_up_buckets",
      "SEARCH sign_up_buckets USING PRIMARY KEY (project_id=? AND ip_key=? AND minute>? AND minute<?)",
      "at most 121 rows (QuotaRepository.maxBuckets): a two-sided range of the integer minute that ends the "
        + "primary key (project, address, minute)"
    ),
    (
      "scheduled_quotas",
      "SEARCH scheduled_quotas USING INDEX scheduled_quotas_by_project (project_id=? AND end_ms>?)",
      "the project's scheduled quotas that have not ended: only admin-key callers add them (ScheduleSignUpQuota)"
    ),
  ]

  /// Tables whose key is the project alone: a search by the project is one row.
  static let keyedByProject: Set<String> = ["projects", "cleanup_stats"]

  /// What a plan's steps show that the statement's cost grows with the data: a full
  /// scan of a table or index, a range search not allowed above, or a search by the
  /// project alone (every row of the project, where a narrower key was meant).
  static func offences(_ sql: String, _ plan: [String]) -> [String] {
    plan.filter { step in
      if step.hasPrefix("SCAN ") { return step != "SCAN CONSTANT ROW" }
      guard step.hasPrefix("SEARCH "), let open = step.firstIndex(of: "(") else { return false }
      let constraint = step[open...]
      if constraint.contains(">") || constraint.contains("<") {
        return !boundedRanges.contains { sql.contains($0.sql) && step.contains($0.step) }
      }
      let table = step.dropFirst("SEARCH ".count).prefix { $0 != " " }
      return constraint == "(project_id=?)" && !keyedByProject.contains(String(table))
    }
  }

  @Test("the checks catch what they are for")
  func offencesFound() {
    #expect(Self.offences("SELECT * FROM accounts", ["SCAN accounts"]) == ["SCAN accounts"])
    let oldQuota =
      "SEARCH sign_up_events USING COVERING INDEX sign_up_events_window (project_id=? AND ip_key=? AND at_ms>?)"
    #expect(Self.offences("SELECT count(*) FROM sign_up_events", [oldQuota]) == [oldQuota])
    let byProject = "SEARCH provider_identities USING PRIMARY KEY (project_id=?)"
    #expect(Self.offences("SELECT 1 FROM provider_identities", [byProject]) == [byProject])
    #expect(
      Self.offences("SELECT 1", ["SCAN CONSTANT ROW", "SEARCH projects USING PRIMARY KEY (project_id=?)"])
        .isEmpty)
  }

  @Test(
    "sign-up, sign-in, refresh, verify, account info, link, unlink, delete, Firebase exchange, quota, a mail")
  func hotPathPlans() async throws {
    let firebase = try FakeFirebase()
    try await LinkingHarness.with { h in
      try await FirebaseExchangeTests.configure(h, firebase, create: true)
      try await FirebaseExchangeTests.imported(h, uid: "fb-anon", anonymous: true)
      try await h.updateConfig({ $0.signUpQuotaPerHour = 10 }, mask: ["sign_up_quota_per_hour"])
      let path = h.directory + "/anonauth.db"
      StatementLog.start(path: path)
      var recorded: Set<String> = []
      do {
        let anonymous = try await h.anonymous()
        let refreshed = try await h.refresh(anonymous.refreshToken)
        _ = try await h.verify(refreshed.idToken, checkRevoked: true)
        _ = try await h.accounts.getAccountInfo(
          GetAccountInfoRequest(idToken: refreshed.idToken), context: h.context("GetAccountInfo"))
        let linked = try await h.link(
          refreshed.idToken, LinkingHarness.password("plan@example.com", "secret-1"))
        _ = try await h.signIn(email: "plan@example.com", password: "secret-1")
        // Queueing a mail checks the outbox's bound (its size row, migration 14).
        _ = try await EmailActionCodeTests.Mailing(h).send("PASSWORD_RESET", email: "plan@example.com")
        let withGoogle = try await h.link(linked.idToken, try h.googleCredential(sub: "g-plan-linked"))
        _ = try await h.unlink(withGoogle.idToken, "google.com")
        _ = try await h.signUp(email: "plan-2@example.com", password: "secret-2")
        let google = try await h.signIn(try h.googleCredential(sub: "g-plan", email: "g-plan@gmail.com"))
        _ = try await h.signIn(try h.googleCredential(sub: "g-plan", email: "g-plan@gmail.com"))
        _ = try await FirebaseExchangeTests.exchange(h, try firebase.token(uid: "fb-anon", now: h.nowSeconds))
        _ = try await FirebaseExchangeTests.exchange(h, try firebase.token(uid: "fb-new", now: h.nowSeconds))
        _ = try await h.accounts.deleteAccount(
          DeleteAccountRequest(idToken: google.idToken), context: h.context("DeleteAccount"))
        // The quota's refusal reads the window to say when to retry.
        for _ in 0..<11 { _ = try? await h.anonymous(ip: "198.51.100.77") }
        recorded = StatementLog.stop(path: path)
      } catch {
        _ = StatementLog.stop(path: path)
        throw error
      }
      #expect(recorded.contains { $0.contains("INSERT INTO sign_up_buckets") })
      #expect(recorded.contains { $0.contains("INSERT INTO mail_outbox") })
      #expect(recorded.contains { $0.contains("FROM sign_up_buckets") && $0.hasPrefix("SELECT") })
      #expect(recorded.count >= 20, "\(recorded.count) statements recorded")
      let statements = recorded.sorted()
      let plans = try await h.store.write { db in
        try statements.map { ($0, try db.queryPlan($0) ?? []) }
      }
      for (sql, plan) in plans {
        let offences = Self.offences(sql, plan)
        #expect(offences.isEmpty, "\(offences) in the plan of: \(sql)")
      }
    }
  }

  /// Deleting an account cascades to its sessions and identities, which no plan shows:
  /// every foreign key's child columns lead an index, so a cascade searches.
  @Test("every foreign key's child columns lead an index or the primary key")
  func foreignKeysAreIndexed() async throws {
    try await LinkingHarness.with { h in
      let unindexed = try await h.store.read { db in
        var unindexed: [String] = []
        let tables = try db.query(
          "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        )
        .map { try $0.string(0) }
        for table in tables {
          var keys: [Int64: [String]] = [:]
          for row in try db.query(
            "SELECT id, \"from\" FROM pragma_foreign_key_list(?) ORDER BY id, seq", [.text(table)])
          {
            keys[try row.int64(0), default: []].append(try row.string(1))
          }
          var leads: [[String]] = []
          for index in try db.query("SELECT name FROM pragma_index_list(?)", [.text(table)]) {
            leads.append(
              try db.query(
                "SELECT name FROM pragma_index_info(?) ORDER BY seqno", [.text(try index.string(0))]
              ).compactMap { try $0.optionalString(0) })
          }
          for columns in keys.values
          where !leads.contains(where: { Array($0.prefix(columns.count)) == columns }) {
            unindexed.append("\(table)(\(columns.joined(separator: ", ")))")
          }
        }
        return unindexed
      }
      #expect(unindexed.isEmpty, "foreign keys without an index: \(unindexed)")
    }
  }
}
