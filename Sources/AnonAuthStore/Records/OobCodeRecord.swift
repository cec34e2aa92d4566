/// An email action's code as stored: its SHA-256 (never the code), what it is for and
/// whom it is bound to.
public struct OobCodeRecord: Sendable, Equatable {
  public var codeHash: [UInt8]
  public var projectID: String
  /// The account; empty for a sign-in link to an address that has no account yet.
  public var localID: String
  /// "PASSWORD_RESET", "VERIFY_EMAIL", "VERIFY_AND_CHANGE_EMAIL", "EMAIL_SIGNIN".
  public var kind: String
  /// The address the mail went to (the account's email when it was sent).
  public var email: String
  /// VERIFY_AND_CHANGE_EMAIL: the address the account changes to.
  public var newEmail: String
  public var createdAtMs: Int64
  public var expiresAtMs: Int64

  public init(
    codeHash: [UInt8], projectID: String, localID: String, kind: String, email: String, newEmail: String = "",
    createdAtMs: Int64, expiresAtMs: Int64
  ) {
    self.codeHash = codeHash
    self.projectID = projectID
    self.localID = localID
    self.kind = kind
    self.email = email
    self.newEmail = newEmail
    self.createdAtMs = createdAtMs
    self.expiresAtMs = expiresAtMs
  }
}

/// One mail waiting in the outbox.
public struct OutboxMail: Sendable, Equatable {
  public var id: Int64 = 0
  public var projectID: String
  public var recipient: String
  public var sender: String
  public var subject: String
  public var textBody: String
  public var htmlBody: String
  /// What the mail is for, and its link: for the log (without the code) and, in --dev,
  /// the emulator's list of codes.
  public var requestType: String
  public var link: String
  public var createdAtMs: Int64
  public var nextAttemptAtMs: Int64
  public var attempts: Int64 = 0

  public init(
    projectID: String, recipient: String, sender: String, subject: String, textBody: String, htmlBody: String,
    requestType: String, link: String, createdAtMs: Int64
  ) {
    self.projectID = projectID
    self.recipient = recipient
    self.sender = sender
    self.subject = subject
    self.textBody = textBody
    self.htmlBody = htmlBody
    self.requestType = requestType
    self.link = link
    self.createdAtMs = createdAtMs
    self.nextAttemptAtMs = createdAtMs
  }
}

extension OobCodeRecord {
  /// `oob_codes`, declared once.
  static let table = TableDefinition<OobCodeRecord>(
    "oob_codes", key: ["code_hash"],
    blank: OobCodeRecord(
      codeHash: [], projectID: "", localID: "", kind: "", email: "", createdAtMs: 0, expiresAtMs: 0),
    columns: [
      .blob("code_hash", \.codeHash),
      .text("project_id", \.projectID),
      .text("local_id", \.localID),
      .text("kind", \.kind),
      .text("email", \.email),
      .text("new_email", \.newEmail),
      .integer("created_at_ms", \.createdAtMs),
      .integer("expires_at_ms", \.expiresAtMs),
    ])
}

extension OutboxMail {
  /// `mail_outbox`, declared once; `last_error` is written by `postpone` alone and never
  /// read back into a mail.
  static let table = TableDefinition<OutboxMail>(
    "mail_outbox", key: ["id"],
    blank: OutboxMail(
      projectID: "", recipient: "", sender: "", subject: "", textBody: "", htmlBody: "", requestType: "",
      link: "", createdAtMs: 0),
    columns: [
      .integer("id", \.id),
      .text("project_id", \.projectID),
      .text("recipient", \.recipient),
      .text("sender", \.sender),
      .text("subject", \.subject),
      .text("text_body", \.textBody),
      .text("html_body", \.htmlBody),
      .text("request_type", \.requestType),
      .text("link", \.link),
      .integer("created_at_ms", \.createdAtMs),
      .integer("next_attempt_at_ms", \.nextAttemptAtMs),
      .integer("attempts", \.attempts),
    ])
}
