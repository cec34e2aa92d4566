import AnonAuthRPCClient
import AnonAuthWire
import Foundation

/// The session commands: sign in anonymously, show who is signed in, print a fresh ID
/// token, verify a token, delete the account, sign out. The session persists between
/// invocations in a 0600 file, so they compose in a shell.
enum SessionCommands {
  static let signInSummary = "sign in with a new anonymous account (or show the one signed in)"
  static let signInHelp = """
    Usage: anonauth signin-anonymously [options]

    Creates an anonymous account and keeps its session; when an anonymous user is already
    signed in, keeps that one (as Firebase's signInAnonymously does). Prints the uid.

    \(Connection.help)
    """

  static func signInAnonymously(_ arguments: Arguments) async throws(CLIError) {
    let connection = try Connection(arguments)
    let auth = try connection.auth()
    let user: User
    do {
      user = try await auth.signInAnonymously()
    } catch {
      let note = SignInMethodNotes.explain(
        error, kind: "anonymous", provider: nil, project: connection.projectOfAPIKey)
      throw .failed("sign-in failed: \(error)\(note.map { "\n\($0)" } ?? "")")
    }
    output(arguments, ["uid": user.uid, "is_anonymous": "\(user.isAnonymous)"], text: user.uid)
  }

  static let whoamiSummary = "show the signed-in user, as the server has the account"
  static let whoamiHelp = """
    Usage: anonauth whoami [options]

    Prints the signed-in user's uid and account (GetAccountInfo). Exit 1 when signed out.

    \(Connection.help)
    """

  static func whoami(_ arguments: Arguments) async throws(CLIError) {
    let user = try signedInUser(try Connection(arguments).auth())
    let info = try await attempt("account lookup") { try await user.accountInfo() }
    let fields: [String: String] = [
      "uid": info.localId, "is_anonymous": "\(info.isAnonymous)", "email": info.email,
      "providers": info.providers.map(\.providerId).joined(separator: ","),
      "created_at_ms": "\(info.createdAtMs)", "disabled": "\(info.disabled)",
    ]
    let kind = info.isAnonymous ? "anonymous" : "permanent"
    output(arguments, fields, text: "\(info.localId) (\(kind)\(info.email.isEmpty ? "" : ", \(info.email)"))")
  }

  static let tokenSummary = "print a valid ID token for the signed-in user"
  static let tokenHelp = """
    Usage: anonauth token [--force-refresh] [options]

    Prints the signed-in user's ID token, refreshed first when under 5 minutes remain
    (or always, with --force-refresh).

    \(Connection.help)
    """

  static func token(_ arguments: Arguments) async throws(CLIError) {
    let user = try signedInUser(try Connection(arguments).auth())
    let forceRefresh = arguments.has("force-refresh")
    let token = try await attempt("token refresh") { try await user.getIDToken(forceRefresh: forceRefresh) }
    output(arguments, ["id_token": token], text: token)
  }

  static let verifySummary = "verify an ID token (TokenService/VerifyIdToken)"
  static let verifyHelp = """
    Usage: anonauth verify TOKEN [--check-revoked] [options]

    Verifies an ID token for the project of the API key and prints its uid and claims.
    With --check-revoked also refuses revoked tokens and disabled accounts.
    Exit 1 when the token is not valid.

    \(Connection.help)
    """

  static func verify(_ arguments: Arguments) async throws(CLIError) {
    guard let token = arguments.positionals.first else { throw .usage("verify: expected a TOKEN") }
    let connection = try Connection(arguments)
    var request = VerifyIdTokenRequest()
    request.idToken = token
    request.checkRevoked = arguments.has("check-revoked")
    let apiKey = try connection.apiKey()
    let response: VerifyIdTokenResponse
    do {
      response = try await TokenServiceClient(connection.client).verifyIdToken(
        request, metadata: ["x-api-key": apiKey])
    } catch {
      throw .failed("not valid: \(error.reason): \(error.message)")
    }
    output(
      arguments,
      [
        "uid": response.uid, "project_id": response.projectId, "sign_in_provider": response.signInProvider,
        "is_anonymous": "\(response.isAnonymous)", "expires_at": "\(response.expiresAt)",
        "claims": response.claimsJson,
      ],
      text:
        "valid: uid \(response.uid) (\(response.signInProvider)), expires at"
        + " \(HumanTime.isoAndRelative(seconds: response.expiresAt))")
  }

  static let deleteSummary = "delete the signed-in user's account"
  static let deleteHelp = """
    Usage: anonauth delete [options]

    Deletes the signed-in account on the server (its refresh tokens die with it) and
    signs out.

    \(Connection.help)
    """

  static func delete(_ arguments: Arguments) async throws(CLIError) {
    let user = try signedInUser(try Connection(arguments).auth())
    try await attempt("delete") { try await user.delete() }
    output(arguments, ["deleted": user.uid], text: "deleted \(user.uid)")
  }

  static let signOutSummary = "forget the local session"
  static let signOutHelp = """
    Usage: anonauth signout [options]

    Forgets the session file. The account stays on the server.

    \(Connection.help)
    """

  static func signOut(_ arguments: Arguments) async throws(CLIError) {
    let auth = try Connection(arguments).auth()
    do {
      try auth.signOut()
    } catch {
      throw .failed("\(error)")
    }
    output(arguments, ["signed_out": "true"], text: "signed out")
  }

  /// Prints `fields` as one JSON object with `--json`, else `text`.
  static func output(_ arguments: Arguments, _ fields: [String: String], text: String) {
    if arguments.has("json") {
      let body = fields.keys.sorted().map { "\(jsonQuote($0)):\(jsonQuote(fields[$0] ?? ""))" }
      print("{" + body.joined(separator: ",") + "}")
    } else {
      print(text)
    }
  }

  static func jsonQuote(_ s: String) -> String {
    let data =
      (try? JSONSerialization.data(withJSONObject: [s], options: [.withoutEscapingSlashes])) ?? Data()
    let text = String(decoding: data, as: UTF8.self)
    return String(text.dropFirst().dropLast())
  }
}
