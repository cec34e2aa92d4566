import AnonAuthRPCClient
import AnonAuthWire
import Foundation

/// `anonauth reset-password` and `anonauth verify-email`: the email actions as a user
/// runs them (the mail is sent by the server; its link's code comes back here).
enum EmailActionCommands {
  /// Flags of these commands that take no value.
  static let switches: Set<String> = ["check"]

  static let resetSummary = "mail a password-reset link, or set the password with its code"
  static let resetHelp = """
    Usage: anonauth reset-password --email EMAIL [options]
           anonauth reset-password --code CODE_OR_LINK [--check] [--password-stdin] [options]

    With --email, asks the server to mail a password-reset link (the answer is the same
    whether or not the address has an account). With --code (the code, or the whole link
    from the mail), sets a new password, prompted for or read with --password-stdin: every
    session of the account ends. --check only says which address the code is for.

    \(Connection.help)
    """

  static let verifySummary = "mail a verification link to the signed-in user, or apply its code"
  static let verifyHelp = """
    Usage: anonauth verify-email [--new-email EMAIL] [options]
           anonauth verify-email --code CODE_OR_LINK [options]

    Without --code, asks the server to mail the signed-in user a link that verifies the
    account's email (with --new-email: that verifies the new address and makes it the
    account's email). With --code (the code, or the whole link), applies it.

    \(Connection.help)
    """

  /// AccountService calls with the API key, failing as the CLI reports them.
  static func accounts(_ connection: Connection) throws(CLIError) -> AccountServiceClient<AdminTransport> {
    AccountServiceClient(
      AdminTransport(client: connection.client, metadata: ["x-api-key": try connection.apiKey()]))
  }

  /// The code of `text`: its `oobCode` when it is a link, else itself.
  static func code(_ text: String) -> String {
    guard text.contains("oobCode="), let query = URLComponents(string: text)?.queryItems else { return text }
    return query.first { $0.name == "oobCode" }?.value ?? text
  }

  static func resetPassword(_ arguments: Arguments) async throws(CLIError) {
    let connection = try Connection(arguments)
    let accounts = try accounts(connection)
    if let email = arguments["email"] {
      var request = SendOobCodeRequest()
      request.requestType = "PASSWORD_RESET"
      request.email = email
      let sent: SendOobCodeResponse = try await accounts.sendOobCode(request)
      SessionCommands.output(
        arguments, ["email": sent.email, "sent": "true"], text: "a reset link is on its way to \(sent.email)")
      return
    }
    guard let given = arguments["code"] else {
      throw .usage("reset-password: pass --email EMAIL or --code CODE")
    }
    var request = ResetPasswordRequest()
    request.oobCode = code(given)
    if !arguments.has("check") {
      request.newPassword = try SecretInput.password(arguments, prompt: "New password: ")
    }
    let answer: ResetPasswordResponse = try await accounts.resetPassword(request)
    let text =
      arguments.has("check")
      ? "\(answer.requestType) code for \(answer.email)" : "password set for \(answer.email)"
    SessionCommands.output(
      arguments, ["email": answer.email, "request_type": answer.requestType], text: text)
  }

  static func verifyEmail(_ arguments: Arguments) async throws(CLIError) {
    let connection = try Connection(arguments)
    let accounts = try accounts(connection)
    if let given = arguments["code"] {
      let info: AccountInfo = try await accounts.applyActionCode(ApplyActionCodeRequest(oobCode: code(given)))
      SessionCommands.output(
        arguments, ["uid": info.localId, "email": info.email, "email_verified": "\(info.emailVerified)"],
        text: "\(info.email) verified")
      return
    }
    let user = try signedInUser(try connection.auth())
    let idToken = try await attempt("token refresh") {
      try await user.getIDToken()
    }
    var request = SendOobCodeRequest()
    request.idToken = idToken
    if let newEmail = arguments["new-email"] {
      request.requestType = "VERIFY_AND_CHANGE_EMAIL"
      request.newEmail = newEmail
    } else {
      request.requestType = "VERIFY_EMAIL"
    }
    let sent: SendOobCodeResponse = try await accounts.sendOobCode(request)
    let to = arguments["new-email"] ?? sent.email
    SessionCommands.output(
      arguments, ["email": to, "sent": "true"], text: "a verification link is on its way to \(to)")
  }
}

extension AdminCommand {
  /// `admin action-link [PROJECT_ID] TYPE EMAIL`: an email action's link made for an
  /// administrator (nothing is mailed), as the Admin SDKs' generate*Link.
  static func actionLink(_ c: Context) async throws(CLIError) {
    let kinds = [
      "password-reset": "PASSWORD_RESET", "verify-email": "VERIFY_EMAIL",
      "verify-and-change-email": "VERIFY_AND_CHANGE_EMAIL", "email-signin": "EMAIL_SIGNIN",
    ]
    let type = try c.arg(0, "TYPE")
    guard let kind = kinds[type] ?? kinds.values.first(where: { $0 == type }) else {
      throw .usage("action-link: TYPE is one of \(kinds.keys.sorted().joined(separator: ", "))")
    }
    var send = SendOobCodeRequest()
    send.requestType = kind
    send.email = try c.arg(1, "EMAIL")
    send.newEmail = c.arguments["new-email"] ?? ""
    var settings = ActionCodeSettings()
    settings.continueUrl = c.arguments["continue-url"] ?? ""
    settings.canHandleCodeInApp = kind == "EMAIL_SIGNIN" || c.arguments.has("in-app")
    send.settings = settings
    let r: SendOobCodeResponse = try await c.admin.generateActionLink(
      GenerateActionLinkRequest(projectId: c.project, request: send))
    out(c, ["link": .string(r.oobLink), "code": .string(r.oobCode), "email": .string(r.email)], r.oobLink)
  }
}
