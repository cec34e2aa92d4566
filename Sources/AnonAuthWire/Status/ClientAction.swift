/// What a client should do about a reason, in the few kinds a client's error handling
/// branches on. The catalogue pairs each reason with one, so a client developer reads the
/// branch first and the details after.
public enum ClientAction: String, Sendable, CaseIterable {
  case retryLater = "Retry later"
  case refreshToken = "Refresh the ID token"
  case signInAgain = "Sign in again"
  case showUser = "Show the user"
  case fixRequest = "Fix the request"
  case fixSetup = "Fix the setup"
  case reconnect = "Reconnect"

  /// What the action means, for the legend of docs/reasons.md.
  public var meaning: String {
    switch self {
    case .retryLater:
      "Nothing is wrong with the call: wait (`retry_after_seconds` when the reply has it, else an exponential backoff with jitter) and send it again."
    case .refreshToken:
      "The ID token is no longer accepted: get a new one with the refresh token, then retry."
    case .signInAgain:
      "The session is gone or too old: sign in again, then retry."
    case .showUser:
      "The user can act on it: show a message and let them try again. Retrying unchanged fails the same way."
    case .fixRequest:
      "The request is wrong (a client bug or an admin's input): fix it. Retrying unchanged fails the same way."
    case .fixSetup:
      "The deployment is wrong (an API key, a project, a disabled method, a certificate): an operator must change it."
    case .reconnect:
      "The connection ends or the server stops: open a new connection and resend what was not answered."
    }
  }
}
