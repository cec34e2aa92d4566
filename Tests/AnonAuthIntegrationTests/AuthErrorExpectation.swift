import AnonAuthRPCClient
import Testing

/// Expects `body` to fail with exactly `expected`: the flow tests check the `AuthError`
/// an app would switch on, not only that a call failed.
func expectAuthError(
  _ expected: AuthError, sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> Void
) async {
  do {
    try await body()
    Issue.record("expected \(expected), the call succeeded", sourceLocation: sourceLocation)
  } catch let error as AuthError {
    #expect(error == expected, sourceLocation: sourceLocation)
  } catch {
    Issue.record("expected \(expected), got \(error)", sourceLocation: sourceLocation)
  }
}
