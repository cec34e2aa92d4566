import AnonAuthRPCClient
import AnonAuthWire
import Foundation

/// `anonauth link`, `signin`, `signup` and `unlink`: credentials for the signed-in user,
/// sign-in with them, and their removal. Passwords come from a prompt or stdin, never
/// from a flag.
enum LinkCommands {
  static let credentialHelp = """
    Credentials:
      email     --email EMAIL [--password-stdin]   the password is prompted for (no echo),
                                                   or read from stdin when it is not a terminal
      google    --id-token TOKEN | --id-token-stdin
      facebook  --access-token TOKEN | --access-token-stdin
      apple     --id-token TOKEN | --id-token-stdin --raw-nonce NONCE [--name "GIVEN FAMILY"]
                the raw nonce whose SHA-256 (hex) the app gave Apple; the name, which
                Apple gives the app once, becomes the display name of an account without one
      oidc      --provider oidc.NAME --id-token TOKEN | --id-token-stdin [--nonce RAW_NONCE]
    """

  static let linkSummary = "link a credential (email, google, apple, facebook, oidc) to the signed-in user"
  static let linkHelp = """
    Usage: anonauth link email|google|apple|facebook|oidc [credential options] [options]

    Links the credential to the signed-in user: the uid stays the same and an anonymous
    account becomes permanent. The session is replaced by the one the link returns.

    \(credentialHelp)

    \(Connection.help)
    """

  static let signInSummary = "sign in with a credential (email, google, apple, facebook, oidc, firebase)"
  static let signInHelp = """
    Usage: anonauth signin email|google|apple|facebook|oidc|firebase [credential options] [options]

    Signs in, replacing the signed-in user. A first sign-in with a provider identity
    creates a permanent account. Prints the uid.

    \(credentialHelp)
    \(FirebaseSignIn.credentialHelp)

    \(Connection.help)
    """

  static let signUpSummary = "create a permanent account with an email and a password"
  static let signUpHelp = """
    Usage: anonauth signup email --email EMAIL [--password-stdin] [options]

    Creates an account with an email and a password and signs in to it.

    \(Connection.help)
    """

  static let unlinkSummary = "remove a provider from the signed-in user"
  static let unlinkHelp = """
    Usage: anonauth unlink PROVIDER [options]

    Removes PROVIDER ("password", "google.com", "apple.com", "facebook.com", "oidc.NAME") from the
    signed-in user; "password" removes the email too. The account stays permanent.

    \(Connection.help)
    """

  static func link(_ arguments: Arguments) async throws(CLIError) {
    let connection = try Connection(arguments)
    let user = try signedInUser(try connection.auth(), hint: " (anonauth signin-anonymously)")
    let wasAnonymous = user.isAnonymous
    let credential = try credential(arguments, command: "link")
    let result = try await attempt("link", hint: { hint($0, arguments, connection) }) {
      try await user.link(with: credential)
    }
    let kind = wasAnonymous ? "; the account is permanent now" : ""
    report(arguments, result, text: "linked \(result.providerID) to \(result.user.uid)\(kind)")
  }

  static func signIn(_ arguments: Arguments) async throws(CLIError) {
    if arguments.positionals.first == "firebase" { return try await FirebaseSignIn.run(arguments) }
    let connection = try Connection(arguments)
    let auth = try connection.auth()
    let credential = try credential(arguments, command: "signin")
    let result = try await attempt("sign-in", hint: { hint($0, arguments, connection) }) {
      try await auth.signIn(with: credential)
    }
    report(arguments, result, text: result.user.uid)
  }

  static func signUp(_ arguments: Arguments) async throws(CLIError) {
    guard arguments.positionals.first == "email" else { throw .usage("signup: expected 'email'") }
    let connection = try Connection(arguments)
    let auth = try connection.auth()
    guard let email = arguments["email"] else { throw .usage("signup email: expected --email EMAIL") }
    let password = try SecretInput.password(arguments)
    let result = try await attempt("sign-up", hint: { hint($0, arguments, connection) }) {
      try await auth.createUser(withEmail: email, password: password)
    }
    report(arguments, result, text: result.user.uid)
  }

  static func unlink(_ arguments: Arguments) async throws(CLIError) {
    guard let provider = arguments.positionals.first else { throw .usage("unlink: expected a PROVIDER") }
    let user = try signedInUser(try Connection(arguments).auth())
    _ = try await attempt("unlink") { try await user.unlink(fromProvider: provider) }
    SessionCommands.output(
      arguments, ["uid": user.uid, "unlinked": provider], text: "unlinked \(provider) from \(user.uid)")
  }

  /// A line saying which sign-in method the project has off, for an operation-not-allowed.
  static func hint(_ error: AuthError, _ arguments: Arguments, _ connection: Connection) -> String {
    SignInMethodNotes.explain(
      error, kind: arguments.positionals.first, provider: arguments["provider"],
      project: connection.projectOfAPIKey
    ).map { "\n\($0)" } ?? ""
  }

  /// The credential the positional kind and the options describe.
  static func credential(_ arguments: Arguments, command: String) throws(CLIError) -> AuthCredential {
    switch arguments.positionals.first {
    case "email":
      guard let email = arguments["email"] else { throw .usage("\(command) email: expected --email EMAIL") }
      return EmailAuthProvider.credential(withEmail: email, password: try SecretInput.password(arguments))
    case "google":
      return GoogleAuthProvider.credential(
        withIDToken: try SecretInput.token(arguments, "id-token"), accessToken: "")
    case "apple":
      guard let rawNonce = arguments["raw-nonce"], !rawNonce.isEmpty else {
        throw .usage("\(command) apple: expected --raw-nonce NONCE (Apple's tokens carry its SHA-256)")
      }
      return OAuthProvider.appleCredential(
        withIDToken: try SecretInput.token(arguments, "id-token"), rawNonce: rawNonce,
        fullName: arguments["name"])
    case "facebook":
      return FacebookAuthProvider.credential(
        withAccessToken: try SecretInput.token(arguments, "access-token"))
    case "oidc":
      guard let provider = arguments["provider"], provider.hasPrefix("oidc.") else {
        throw .usage("\(command) oidc: expected --provider oidc.NAME")
      }
      return OAuthProvider.credential(
        providerID: provider, idToken: try SecretInput.token(arguments, "id-token"), nonce: arguments["nonce"]
      )
    default:
      throw .usage(
        "\(command): expected email, google, apple, facebook or oidc\(command == "signin" ? " (or firebase)" : "") (see anonauth \(command) --help)"
      )
    }
  }

  static func report(_ arguments: Arguments, _ result: AuthDataResult, text: String) {
    SessionCommands.output(
      arguments,
      [
        "uid": result.user.uid, "is_anonymous": "\(result.user.isAnonymous)",
        "is_new_user": "\(result.isNewUser)",
        "provider": result.providerID,
      ], text: text)
  }
}
