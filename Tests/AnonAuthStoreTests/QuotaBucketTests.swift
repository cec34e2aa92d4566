import Testing

@testable import AnonAuthStore

/// Migration 11: the sign-up quota's window as one counter per project, IP key and
/// minute. Admission reads at most the hour's minutes, however many sign-ups they hold;
/// the boundary minute never lets in more than the quota; refunds and refusals give back.
@Suite("Sign-up quota: per-minute counters")
struct QuotaBucketTests {
  static let hour: Int64 = 3_600_000
  /// The start of a minute.
  static let t0: Int64 = 1_800_000_000_000

  struct Refused: Error {}

  static func project(_ db: Database) throws {
    try db.execute("INSERT INTO projects (project_id, created_at_ms) VALUES ('p', 0)")
  }

  /// One sign-up for `ip` at `at` against `quota`: true if admitted.
  static func admit(_ store: Store, _ ip: String, at: Int64, quota: Int64) async throws -> Bool {
    do {
      try await store.write { db in
        try QuotaRepository.record(
          db, projectID: "p", ipKey: ip, atMs: at, sinceMs: at - hour, quota: quota, else: { Refused() })
      }
      return true
    } catch is Refused {
      return false
    }
  }

  static func window(_ store: Store, _ ip: String, at: Int64) async throws -> QuotaRepository.Window {
    try await store.read { db in
      try QuotaRepository.standing(db, projectID: "p", ipKey: ip, sinceMs: at - hour, nowMs: at)
    }
  }

  /// A full minute's row, as many sign-ups leave it.
  static func fill(_ db: Database, _ ip: String, minute: Int64, count: Int64) throws {
    let start = minute * QuotaRepository.bucketMs
    try db.execute(
      """
      INSERT INTO sign_up_buckets (project_id, ip_key, minute, count, oldest_ms, at_oldest, newest_ms)
      VALUES ('p', ?, ?, ?, ?, 1, ?)
      """, [.text(ip), .integer(minute), .integer(count), .integer(start), .integer(start + 59_999)])
  }

  @Test(
    "exactly N of M concurrent sign-ups get in, in one statement each on either engine",
    arguments: Engine.allCases)
  func exactlyN(engine: Engine) async throws {
    try await withStore(engine: engine, migrations: AnonAuthSchema.migrations) { store, _ in
      try await store.write { db in try Self.project(db) }
      let admitted = try await withThrowingTaskGroup(of: Bool.self) { group in
        for _ in 0..<12 { group.addTask { try await Self.admit(store, "a", at: Self.t0, quota: 5) } }
        return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
      }
      #expect(admitted == 5)
      #expect(try await Self.window(store, "a", at: Self.t0).count(sinceMs: Self.t0 - Self.hour) == 5)
      // On the replicated store the sign-up's check and count is one request to the leader.
      let sent = try await store.write { db in
        let before = db.requestsSent
        try QuotaRepository.record(
          db, projectID: "p", ipKey: "b", atMs: Self.t0, sinceMs: Self.t0 - Self.hour, quota: 5,
          else: { Refused() })
        return db.requestsSent - before
      }
      #expect(sent == (engine == .cluster ? 1 : 0))
    }
  }

  @Test("a window of 1,200,000 sign-ups costs what one of 60 does: the same plan and the same steps")
  func constantCost() async throws {
    try await withStore(migrations: AnonAuthSchema.migrations) { store, _ in
      let now = Self.t0 + Self.hour - 1
      let first = QuotaRepository.minute(now - Self.hour)
      try await store.write { db in
        try Self.project(db)
        for minute in first + 1...first + 60 {
          try Self.fill(db, "small", minute: minute, count: 1)
          try Self.fill(db, "large", minute: minute, count: 20_000)
        }
        // Rows after each window's last, so both range searches end the same way.
        try Self.fill(db, "large+", minute: first, count: 1)
        try Self.fill(db, "small+", minute: first, count: 1)
      }
      func steps(_ ip: String, quota: Int64) async throws -> (record: Int?, standing: Int?) {
        try await store.write { db in
          try QuotaRepository.record(
            db, projectID: "p", ipKey: ip, atMs: now, sinceMs: now - Self.hour, quota: quota,
            else: { Refused() })
          _ = try QuotaRepository.standing(
            db, projectID: "p", ipKey: ip, sinceMs: now - Self.hour, nowMs: now)
          return (
            db.virtualMachineSteps(QuotaRepository.recordSQL),
            db.virtualMachineSteps(QuotaRepository.standingSQL)
          )
        }
      }
      _ = try await steps("small", quota: 1_000_000)  // prepares both statements
      let small = try await steps("small", quota: 1_000_000)
      let large = try await steps("large", quota: 1_200_003)
      #expect(small.record != nil && small.standing != nil)
      #expect(small.record == large.record)
      #expect(small.standing == large.standing)
      // The window counts every one: the quota's last place, then a refusal.
      #expect(try await Self.window(store, "large", at: now).count(sinceMs: now - Self.hour) == 1_200_001)
      #expect(try await Self.admit(store, "large", at: now, quota: 1_200_002))
      #expect(try await !Self.admit(store, "large", at: now, quota: 1_200_002))

      let plans = try await store.read { db in
        [
          try db.queryPlan(QuotaRepository.recordSQL)?.joined(separator: " | ") ?? "",
          try db.queryPlan(QuotaRepository.standingSQL)?.joined(separator: " | ") ?? "",
        ]
      }
      for plan in plans {
        #expect(
          plan.contains(
            "SEARCH sign_up_buckets USING PRIMARY KEY (project_id=? AND ip_key=? AND minute>? AND minute<?)"),
          "\(plan)")
        #expect(!plan.replacingOccurrences(of: "SCAN CONSTANT ROW", with: "").contains("SCAN "), "\(plan)")
      }
    }
  }

  @Test("migration 11 carries the window's sign-ups over into minutes, and the quota holds across it")
  func migration() async throws {
    let t0 = Self.t0
    try await withUpgradedStore(from: 10) { db in
      try Self.project(db)
      for (ip, at) in [
        ("a", t0), ("a", t0), ("a", t0 + 30_000), ("a", t0 + 61_000), ("b", t0 + 300_000),
        ("old", t0 - 2 * Self.hour),
      ] {
        try db.execute(
          "INSERT INTO sign_up_events (project_id, ip_key, at_ms) VALUES ('p', ?, ?)",
          [.text(ip), .integer(at)])
      }
    } _: { store in
      let tables = try await store.read { db in
        try db.query("SELECT name FROM sqlite_master WHERE type = 'table'").map { try $0.string(0) }
      }
      #expect(!tables.contains("sign_up_events"))
      let a = try await Self.window(store, "a", at: t0 + 120_000)
      #expect(
        a.buckets == [
          .init(count: 3, oldestMs: t0, atOldest: 2, newestMs: t0 + 30_000),
          .init(count: 1, oldestMs: t0 + 61_000, atOldest: 1, newestMs: t0 + 61_000),
        ])
      #expect(
        try await Self.window(store, "b", at: t0 + 120_000).count(sinceMs: t0 + 120_000 - Self.hour) == 1)
      // Four in the window: a quota of 4 refuses the fifth; an hour after the first two,
      // two places are free.
      #expect(try await !Self.admit(store, "a", at: t0 + 120_000, quota: 4))
      #expect(try await Self.admit(store, "a", at: t0 + Self.hour, quota: 4))
      #expect(try await Self.admit(store, "a", at: t0 + Self.hour, quota: 4))
      #expect(try await !Self.admit(store, "a", at: t0 + Self.hour, quota: 4))
      // The clean-up pass drops the minute that left every window.
      let pruned = try await store.write { db in
        try QuotaRepository.prune(db, beforeMs: t0 - Self.hour, limit: 100)
      }
      #expect(pruned == 1)
      #expect(try await Self.window(store, "old", at: t0 - 2 * Self.hour).buckets.isEmpty)
    }
  }

  @Test("a refund gives its place back; a refused or failed job leaves the window as it was")
  func refunds() async throws {
    try await withStore(migrations: AnonAuthSchema.migrations) { store, _ in
      try await store.write { db in try Self.project(db) }
      let t0 = Self.t0
      #expect(try await Self.admit(store, "a", at: t0, quota: 3))
      #expect(try await Self.admit(store, "a", at: t0, quota: 3))
      #expect(try await Self.admit(store, "a", at: t0 + 10_000, quota: 3))
      #expect(try await !Self.admit(store, "a", at: t0 + 15_000, quota: 3))
      // A job that counted and then failed takes its count back with it.
      await #expect(throws: JobFailed.self) {
        try await store.write { db in
          try QuotaRepository.record(
            db, projectID: "p", ipKey: "a", atMs: t0 + 15_000, sinceMs: t0 + 15_000 - Self.hour, quota: 100,
            else: { Refused() })
          throw JobFailed(name: "after the count")
        }
      }
      #expect(try await Self.window(store, "a", at: t0 + 15_000).buckets.map(\.count) == [3])
      // One of the two at t0 given back: a place is free again.
      try await store.write { db in try QuotaRepository.forget(db, projectID: "p", ipKey: "a", atMs: t0) }
      #expect(
        try await Self.window(store, "a", at: t0 + 15_000).buckets == [
          .init(count: 2, oldestMs: t0, atOldest: 1, newestMs: t0 + 10_000)
        ])
      #expect(try await Self.admit(store, "a", at: t0 + 20_000, quota: 3))
      #expect(try await !Self.admit(store, "a", at: t0 + 20_000, quota: 3))
      // An hour after t0 the one left there has gone: one place, exactly.
      #expect(try await Self.admit(store, "a", at: t0 + Self.hour, quota: 3))
      #expect(try await !Self.admit(store, "a", at: t0 + Self.hour, quota: 3))
    }
  }

  @Test("the boundary minute: exact at its oldest and newest sign-ups, never over the quota in between")
  func minuteBoundary() async throws {
    try await withStore(migrations: AnonAuthSchema.migrations) { store, _ in
      try await store.write { db in try Self.project(db) }
      let t0 = Self.t0
      for second: Int64 in [10, 20, 50] {
        #expect(try await Self.admit(store, "a", at: t0 + second * 1000, quota: 3))
      }
      #expect(try await !Self.admit(store, "a", at: t0 + 55_000, quota: 3))
      // The oldest (10 s) leaves at 10 s past the hour: its place is free then, not before.
      let full = try await Self.window(store, "a", at: t0 + 55_000)
      #expect(full.roomSinceMs(quota: 3, sinceMs: t0 + 55_000 - Self.hour) == t0 + 10_000)
      #expect(try await !Self.admit(store, "a", at: t0 + Self.hour + 9_999, quota: 3))
      #expect(try await Self.admit(store, "a", at: t0 + Self.hour + 10_000, quota: 3))
      // Past 20 s the sign-up at 20 s has left too, but the minute cannot tell it from
      // the one at 50 s: both count until 50 s (exact would let one more in).
      let now = t0 + Self.hour + 30_000
      let window = try await Self.window(store, "a", at: now)
      #expect(window.count(sinceMs: now - Self.hour) == 3)
      #expect(window.roomSinceMs(quota: 3, sinceMs: now - Self.hour) == t0 + 50_000)
      #expect(try await !Self.admit(store, "a", at: now, quota: 3))
      #expect(try await Self.admit(store, "a", at: t0 + Self.hour + 50_000, quota: 3))
      #expect(try await Self.admit(store, "a", at: t0 + Self.hour + 50_000, quota: 3))
      #expect(try await !Self.admit(store, "a", at: t0 + Self.hour + 50_000, quota: 3))
    }
  }
}
