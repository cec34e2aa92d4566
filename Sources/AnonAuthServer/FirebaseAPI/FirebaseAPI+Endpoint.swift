import AnonAuthCrypto

extension FirebaseAPI {
  /// One REST call the API serves: its name (the `method` of the call's log line), the
  /// paths it answers and the HTTP method, and what it does. Each family of calls lists
  /// its endpoints in its own file (`FirebaseAPI+Accounts.swift`, `+Token.swift`, ...);
  /// `allEndpoints` joins them.
  public struct Endpoint: Sendable {
    /// "accounts:signUp", "token": what the log line names.
    public let name: String
    public let httpMethod: String
    public let pattern: FirebaseAPIPath.Pattern
    /// The answer's JSON body (status 200), or the error to send.
    public let handle: @Sendable (Call) async throws(FirebaseError) -> JSONValue

    public init(
      _ name: String, _ httpMethod: String = "POST", path: String,
      handle: @escaping @Sendable (Call) async throws(FirebaseError) -> JSONValue
    ) {
      self.name = name
      self.httpMethod = httpMethod
      self.pattern = FirebaseAPIPath.Pattern(path)
      self.handle = handle
    }
  }
}
