import Testing

@testable import AnonAuthStore

/// The outbox's bound is checked against a size the triggers keep (migration 14), not a
/// count of the outbox: it must stay equal to the rows, through queueing, sending and
/// an upgrade that finds mails waiting.
@Suite("Mail outbox size")
struct MailOutboxSizeTests {
  static func mail(_ n: Int) -> OutboxMail {
    OutboxMail(
      projectID: "p", recipient: "r\(n)@example.com", sender: "s@example.com", subject: "s", textBody: "t",
      htmlBody: "h", requestType: "PASSWORD_RESET", link: "l", createdAtMs: Int64(n))
  }

  @Test("queueing stops at the capacity, and a sent mail makes room")
  func bound() async throws {
    try await withStore(migrations: AnonAuthSchema.migrations) { store, _ in
      let (queued, size, rows) = try await store.write { db in
        let queued = try (0..<4).map { try MailOutboxRepository.enqueue(db, Self.mail($0), capacity: 3) }
        return (
          queued, try MailOutboxRepository.count(db),
          try db.queryOne("SELECT count(*) FROM mail_outbox")?.int(0)
        )
      }
      #expect(queued == [true, true, true, false])
      #expect(size == 3 && rows == 3)
      let again = try await store.write { db in
        let first = try MailOutboxRepository.due(db, nowMs: 0, limit: 1)
        for mail in first { try MailOutboxRepository.remove(db, id: mail.id) }
        return (
          try MailOutboxRepository.enqueue(db, Self.mail(9), capacity: 3), try MailOutboxRepository.count(db)
        )
      }
      #expect(again.0)
      #expect(again.1 == 3)
      let plan = try await store.read { db in
        try db.queryPlan("SELECT count FROM mail_outbox_size WHERE id = 1", [])
      }
      #expect(plan.hasPrefix("SEARCH mail_outbox_size"), "\(plan)")
    }
  }

  @Test("an upgrade counts the mails already waiting")
  func upgrade() async throws {
    try await withUpgradedStore(
      from: 13,
      seed: { db in
        for n in 0..<2 {
          try db.execute(
            """
            INSERT INTO mail_outbox (project_id, recipient, sender, subject, text_body, html_body, request_type,
              link, created_at_ms, next_attempt_at_ms) VALUES ('p', ?, 's', 's', 't', 'h', 'PASSWORD_RESET', 'l', 0, 0)
            """, [.text("r\(n)@example.com")])
        }
      }
    ) { store in
      let size = try await store.read { db in try MailOutboxRepository.count(db) }
      #expect(size == 2)
    }
  }
}
