import AnonAuthRPCClient

/// `auth`'s signed-in user; "not signed in" (then `hint`) when there is none.
func signedInUser(_ auth: Auth, hint: String = "") throws(CLIError) -> User {
  guard let user = auth.currentUser else { throw .failed("not signed in\(hint)") }
  return user
}

/// What `call` answers; when it fails, "`what` failed: " and the error (then what `hint`
/// says about an `AuthError`): the way every session command reports a refused call.
/// (`call` is untyped: Swift infers `any Error` for a closure that only calls a
/// `throws(AuthError)` function.)
func attempt<T>(
  _ what: String, hint: (AuthError) -> String = { _ in "" }, _ call: () async throws -> T
) async throws(CLIError) -> T {
  do {
    return try await call()
  } catch {
    throw .failed("\(what) failed: \(error)\((error as? AuthError).map(hint) ?? "")")
  }
}
