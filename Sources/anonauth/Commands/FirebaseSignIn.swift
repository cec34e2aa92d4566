import AnonAuthRPCClient
import Foundation

/// `anonauth signin firebase --id-token-stdin`: the Firebase session exchange. The
/// Firebase ID token is read from standard input only, so that it never shows in a
/// process list or a shell history.
enum FirebaseSignIn {
  static let credentialHelp = """
      firebase  --id-token-stdin                   a Firebase ID token of the project's
                                                   firebase_project_id, exchanged for a
                                                   session on the account with its uid
    """

  static func run(_ arguments: Arguments) async throws(CLIError) {
    guard arguments["id-token"] == nil else {
      throw .usage("signin firebase: the token is never taken from a flag: pipe it with --id-token-stdin")
    }
    guard arguments.has("id-token-stdin") else { throw .usage("signin firebase: expected --id-token-stdin") }
    let idToken = try SecretInput.readStandardInput()
    guard !idToken.isEmpty else { throw .usage("signin firebase: the ID token on standard input is empty") }
    let auth = try Connection(arguments).auth()
    let result = try await attempt("Firebase session exchange") {
      try await auth.signIn(withFirebaseIDToken: idToken)
    }
    LinkCommands.report(arguments, result, text: result.user.uid)
  }
}
