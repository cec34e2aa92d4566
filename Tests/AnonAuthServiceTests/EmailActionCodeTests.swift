import AnonAuthCrypto
import AnonAuthStore
import AnonAuthWire
import Testing

@testable import AnonAuthService

/// Email action codes in the service layer: random, stored as their SHA-256 only, bound to
/// account and email, single-use, with Firebase's lifetimes; a newer code spends the older.
@Suite struct EmailActionCodeTests {
  /// The harness's services with mail delivery on and the sent codes kept.
  struct Mailing {
    let h: LinkingHarness
    let env: ServiceEnvironment
    let mailbox = DevMailbox()
    var accounts: AccountService { AccountService(environment: env) }

    init(_ h: LinkingHarness, outboxCapacity: Int64 = 10_000) {
      self.h = h
      var env = h.env
      env.email.deliveryConfigured = true
      env.email.devMailbox = mailbox
      env.email.outboxCapacity = outboxCapacity
      env.email.actionURL = { "https://app.example.com/action" }
      self.env = env
    }

    @discardableResult
    func send(_ kind: String, email: String = "", idToken: String = "", newEmail: String = "")
      async throws(RPCError) -> SendOobCodeResponse
    {
      try await accounts.sendOobCode(
        SendOobCodeRequest(requestType: kind, email: email, idToken: idToken, newEmail: newEmail),
        context: h.context("SendOobCode"))
    }

    func lastCode(_ email: String) throws -> String {
      try #require(mailbox.codes(projectID: LinkingHarness.projectID).last { $0.email == email }).oobCode
    }

    func reset(_ code: String, _ password: String = "") async throws(RPCError) -> ResetPasswordResponse {
      try await accounts.resetPassword(
        ResetPasswordRequest(oobCode: code, newPassword: password), context: h.context("ResetPassword"))
    }
  }

  @Test func aCodeIsStoredOnlyAsItsHashAndWorksOnce() async throws {
    try await LinkingHarness.with { h in
      let m = Mailing(h)
      let user = try await h.signUp(email: "ann@example.com", password: "secret-1")
      let answer = try await m.send("PASSWORD_RESET", email: "Ann@Example.com")
      #expect(answer.email == "ann@example.com" && answer.oobLink.isEmpty && answer.oobCode.isEmpty)
      let code = try m.lastCode("ann@example.com")
      #expect(code.utf8.count == 43)
      let rows = try await h.store.read { db in
        try db.query("SELECT code_hash, local_id, kind, email, expires_at_ms - created_at_ms FROM oob_codes")
          .map { row in
            (try row.blob(0), try row.string(1), try row.string(2), try row.string(3), try row.int64(4))
          }
      }
      #expect(rows.count == 1)
      #expect(rows[0].0 == SHA256.hash(Array(code.utf8)))
      #expect(rows[0].1 == user.localId && rows[0].2 == "PASSWORD_RESET" && rows[0].3 == "ann@example.com")
      #expect(rows[0].4 == 3_600_000)
      let queued = try await h.store.read { db in try MailOutboxRepository.due(db, nowMs: .max, limit: 10) }
      #expect(queued.count == 1 && queued[0].recipient == "ann@example.com")
      // The outbox holds the mail sealed (no working link in the store); the worker opens it.
      #expect(!queued[0].link.contains(code) && !queued[0].textBody.contains(code))
      let opened = try OutboxSeal.open(queued[0], key: h.env.masterKey)
      #expect(opened.link.hasPrefix("https://app.example.com/action?mode=resetPassword&oobCode="))

      let checked = try await m.reset(code)
      #expect(checked.email == "ann@example.com" && checked.requestType == "PASSWORD_RESET")
      _ = try await m.reset(code, "secret-2")
      let stored = try await h.account(user.localId)
      #expect(stored.validSince >= h.clock.nowSeconds())
      await expectLinkError(.invalidOobCode) { try await m.reset(code, "secret-3") }
      await expectLinkError(.invalidRefreshToken) { try await h.refresh(user.refreshToken) }
    }
  }

  @Test func aResetCodeExpiresAfterAnHour() async throws {
    try await LinkingHarness.with { h in
      let m = Mailing(h)
      _ = try await h.signUp(email: "bob@example.com", password: "secret-1")
      try await m.send("PASSWORD_RESET", email: "bob@example.com")
      let code = try m.lastCode("bob@example.com")
      h.clock.advance(seconds: 3599)
      #expect(try await m.reset(code).email == "bob@example.com")
      h.clock.advance(seconds: 1)
      await expectLinkError(.expiredOobCode) { try await m.reset(code, "secret-2") }
    }
  }

  @Test func aNewerCodeSpendsTheOlderAndTheCodeIsBoundToTheEmail() async throws {
    try await LinkingHarness.with { h in
      let m = Mailing(h)
      let user = try await h.signUp(email: "cy@example.com", password: "secret-1")
      try await m.send("VERIFY_EMAIL", idToken: user.idToken)
      let first = try m.lastCode("cy@example.com")
      try await m.send("VERIFY_EMAIL", idToken: user.idToken)
      let second = try m.lastCode("cy@example.com")
      #expect(first != second)
      let apply = { (code: String) async throws(RPCError) -> AccountInfo in
        try await m.accounts.applyActionCode(
          ApplyActionCodeRequest(oobCode: code), context: h.context("ApplyActionCode"))
      }
      await expectLinkError(.invalidOobCode) { try await apply(first) }
      // The account's email changes: the code sent to the old one no longer applies.
      _ = try await m.accounts.updateAccount(
        UpdateOwnAccountRequest(idToken: user.idToken, updateMask: ["email"], email: "cy2@example.com"),
        context: h.context("UpdateAccount"))
      await expectLinkError(.invalidOobCode) { try await apply(second) }
      #expect(try await h.account(user.localId).emailVerified == false)
    }
  }

  @Test func enumerationProtectionAnswersTheSameAndQueuesNothing() async throws {
    try await LinkingHarness.with { h in
      let m = Mailing(h)
      let unknown = try await m.send("PASSWORD_RESET", email: "nobody@example.com")
      #expect(unknown.email == "nobody@example.com")
      let queued = try await h.store.read { db in try MailOutboxRepository.count(db) }
      #expect(queued == 0)
      #expect(m.mailbox.codes(projectID: LinkingHarness.projectID).isEmpty)
    }
  }

  @Test func withoutDeliveryOrOverTheOutboxSendingIsRefused() async throws {
    try await LinkingHarness.with { h in
      _ = try await h.signUp(email: "dee@example.com", password: "secret-1")
      await expectLinkError(.operationNotAllowed) {
        try await AccountService(environment: h.env).sendOobCode(
          SendOobCodeRequest(requestType: "PASSWORD_RESET", email: "dee@example.com"),
          context: h.context("SendOobCode"))
      }
      let m = Mailing(h, outboxCapacity: 1)
      try await m.send("PASSWORD_RESET", email: "dee@example.com")
      await expectLinkError(.tooManyAttempts) { try await m.send("PASSWORD_RESET", email: "dee@example.com") }
    }
  }
}

/// The mails' texts: the request's language when it is written, else English; HTML escaped.
@Suite struct MailTemplateTests {
  @Test func theLocalesLanguageOrEnglish() {
    #expect(MailTemplates.language("de-AT") == "de" && MailTemplates.language("fr_FR") == "fr")
    #expect(MailTemplates.language("ja") == "en" && MailTemplates.language("") == "en")
    let german = MailTemplates.render(
      kind: .passwordReset, appName: "App", email: "a@example.com", newEmail: "", link: "https://x/?a=1&b=2",
      locale: "de")
    #expect(german.subject == "Passwort für App zurücksetzen")
    #expect(german.text.contains("https://x/?a=1&b=2"))
    #expect(german.html.contains(#"href="https://x/?a=1&amp;b=2""#))
    for kind in OobKind.allCases {
      for language in MailTemplates.languages {
        let mail = MailTemplates.render(
          kind: kind, appName: "<App>", email: "a@example.com", newEmail: "n@example.com", link: "L",
          locale: language)
        #expect(
          mail.subject.contains("<App>") && !mail.html.contains("<App>") && mail.html.contains("&lt;App&gt;"))
      }
    }
  }
}
