import AnonAuthStore
import AnonAuthWire

/// Sending an email action (`SendOobCode`, and `GenerateActionLink` for administrators):
/// the checks, a new code that spends the older ones, and the mail queued in the outbox
/// in the same write, so a send that was answered is delivered even if the daemon stops.
struct EmailActionSender {
  let env: ServiceEnvironment

  /// Whom a send is for, as the caller's service found it.
  struct Target {
    /// The account; nil for an address with no account (a reset under enumeration
    /// protection: nothing is sent; a sign-in link: the account is made on first use).
    var account: AccountRecord?
    /// The address the code is bound to (the account's email when there is one).
    var email: String
    /// VERIFY_AND_CHANGE_EMAIL: the new address, where the mail goes.
    var newEmail = ""
    /// Answered as sent, and nothing sent (a disabled account under enumeration
    /// protection).
    var silent = false
  }

  /// The request's kind, or `INVALID_ARGUMENT`.
  static func kind(_ request: SendOobCodeRequest) throws(RPCError) -> OobKind {
    guard let kind = OobKind(rawValue: request.requestType) else {
      throw RPCError(
        .invalidArgument,
        "request_type must be PASSWORD_RESET, VERIFY_EMAIL, VERIFY_AND_CHANGE_EMAIL or EMAIL_SIGNIN")
    }
    return kind
  }

  /// The action-code settings' rules, before anything is looked up.
  static func checkSettings(_ request: SendOobCodeRequest, kind: OobKind, project: ProjectRecord)
    throws(RPCError)
  {
    let settings = request.settings ?? ActionCodeSettings()
    if kind == .emailSignIn {
      guard settings.canHandleCodeInApp else {
        throw RPCError(.invalidContinueUri, "EMAIL_SIGNIN needs can_handle_code_in_app")
      }
      guard !settings.continueUrl.isEmpty else {
        throw RPCError(.invalidContinueUri, "EMAIL_SIGNIN needs a continue_url")
      }
    }
    if !settings.continueUrl.isEmpty { try ContinueURL.check(settings.continueUrl, project: project) }
    for (name, value) in [
      ("ios_bundle_id", settings.iosBundleId), ("android_package_name", settings.androidPackageName),
    ]
    where value.utf8.count > 256 {
      throw RPCError(.invalidArgument, "\(name) is longer than 256 bytes")
    }
    guard request.locale.utf8.count <= 35,
      request.locale.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") })
    else { throw RPCError(.invalidArgument, "locale must be a language tag") }
  }

  /// Makes the code and queues its mail (or, with `returnLink`, answers the link instead
  /// of mailing it). A target without an account under enumeration protection queues
  /// nothing and answers as if it had.
  func send(
    _ request: SendOobCodeRequest, kind: OobKind, target: Target, project: ProjectRecord, apiKey: String,
    returnLink: Bool, log: CallLogFields?, _ admitted: Admitted
  ) async throws(RPCError) -> SendOobCodeResponse {
    var response = SendOobCodeResponse()
    response.email = target.email
    let recipient = kind == .verifyAndChangeEmail ? target.newEmail : target.email
    let nowMs = env.clock.nowMs()
    if !returnLink {
      guard env.email.deliveryConfigured else {
        throw RPCError(.operationNotAllowed, "this server sends no email (it has no --smtp-url)")
      }
      // Per recipient and per account, whether or not the address has an account, so a
      // refusal says nothing about it; then the mail's cost per IP and project (a mail
      // is counted as four writes: its code, its outbox row, its delivery and its
      // removal).
      var keys = ["\(project.projectID)|\(recipient)"]
      if let account = target.account { keys.append("\(project.projectID)#\(account.localID)") }
      try env.email.recipientLimit.take(keys, nowMs: nowMs)
      try admitted.reserve([.write, .write, .write, .write])
    }
    if target.silent || (target.account == nil && kind != .emailSignIn) {
      // A write job as a send has, so that the answer comes in the same time class
      // whether or not the address has an account.
      try await env.write(admitted) { db in _ = try MailOutboxRepository.nextDueMs(db) }
      env.logger.info(
        "email action not sent: no enabled account has the address",
        ["project_id": .string(project.projectID), "request_type": .string(kind.rawValue)])
      return response
    }
    let localID = target.account?.localID ?? ""
    let made = try OobCodeFactory.make()
    let settings = request.settings ?? ActionCodeSettings()
    let link = ActionLink.make(
      base: env.email.actionURL(), kind: kind, code: made.code, apiKey: apiKey,
      continueURL: settings.continueUrl, locale: request.locale)
    let code = OobCodeRecord(
      codeHash: made.hash, projectID: project.projectID, localID: localID, kind: kind.rawValue,
      email: target.email, newEmail: target.newEmail, createdAtMs: nowMs, expiresAtMs: nowMs + kind.lifetimeMs
    )
    let appName = project.emailAppName.isEmpty ? project.projectID : project.emailAppName
    let rendered =
      ProjectTemplates.render(
        project.emailTemplatesJSON, kind: kind, locale: request.locale, appName: appName, email: target.email,
        newEmail: target.newEmail, link: link)
      ?? MailTemplates.render(
        kind: kind, appName: appName, email: target.email, newEmail: target.newEmail, link: link,
        locale: request.locale)
    let mail = OutboxMail(
      projectID: project.projectID, recipient: recipient,
      sender: project.emailSender.isEmpty ? env.email.defaultSender : project.emailSender,
      subject: rendered.subject, textBody: rendered.text, htmlBody: rendered.html, requestType: kind.rawValue,
      link: link, createdAtMs: nowMs)
    let capacity = env.email.outboxCapacity
    let stored: OutboxMail
    do {
      stored = try OutboxSeal.seal(mail, key: env.masterKey)
    } catch {
      throw RPCError(.internalError, "the mail could not be sealed")
    }
    let queued = try await env.write(admitted) { db in
      try OobCodesRepository.insertReplacing(db, code)
      if returnLink { return true }
      return try MailOutboxRepository.enqueue(db, stored, capacity: capacity)
    }
    guard queued else {
      env.logger.error(
        "email action refused: the mail outbox is full", ["project_id": .string(project.projectID)])
      throw RPCError(
        .tooManyAttempts, "the mail outbox is full; try again later", details: ["retry_after_seconds": "60"])
    }
    env.logger.info(
      returnLink ? "email action link made" : "email action queued",
      [
        "project_id": .string(project.projectID), "uid": .string(localID),
        "request_type": .string(kind.rawValue),
      ])
    if returnLink {
      response.oobLink = link
      response.oobCode = made.code
    } else {
      env.email.devMailbox?.record(
        DevMailbox.Entry(
          projectID: project.projectID, email: recipient, oobCode: made.code, oobLink: link,
          requestType: kind.rawValue))
      env.email.mailQueued()
    }
    if !localID.isEmpty { log?.setAccount(uid: localID) }
    return response
  }
}
