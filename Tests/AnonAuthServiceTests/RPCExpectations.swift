import AnonAuthCrypto
import AnonAuthService
import AnonAuthWire
import Testing

/// Expects `body` to fail with `reason` and its status code; returns the error for more
/// checks (nil, with an issue recorded, when it did not fail so).
@discardableResult
func expectRPCError<T>(
  _ reason: Reason, _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation,
  _ body: () async throws(RPCError) -> T
) async -> RPCError? {
  let outcome: Result<T, RPCError>
  do {
    outcome = .success(try await body())
  } catch {
    outcome = .failure(error)
  }
  return judgeRPCOutcome(outcome, reason, comment, sourceLocation: sourceLocation)
}

extension ServiceHarness {
  /// GetAccountInfo, DeleteAccount and VerifyIdToken (with `checkRevoked`) each refuse
  /// `idToken` with `reason`.
  func expectIDTokenCallsRefuse(
    _ idToken: String, _ reason: Reason, checkRevoked: Bool = false,
    sourceLocation: SourceLocation = #_sourceLocation
  ) async {
    await expectRPCError(reason, sourceLocation: sourceLocation) { () async throws(RPCError) in
      try await accountInfo(idToken)
    }
    await expectRPCError(reason, sourceLocation: sourceLocation) { () async throws(RPCError) in
      try await accounts.deleteAccount(
        DeleteAccountRequest(idToken: idToken), context: accountContext("DeleteAccount"))
    }
    await expectRPCError(reason, sourceLocation: sourceLocation) { () async throws(RPCError) in
      try await verify(idToken, checkRevoked: checkRevoked)
    }
  }
}

/// The same, for a check that does not suspend.
@discardableResult
func expectRPCError<T>(
  _ reason: Reason, _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation,
  sync body: () throws(RPCError) -> T
) -> RPCError? {
  judgeRPCOutcome(
    Result { () throws(RPCError) -> T in try body() }, reason, comment, sourceLocation: sourceLocation)
}

/// Judges either call's outcome.
private func judgeRPCOutcome<T>(
  _ outcome: Result<T, RPCError>, _ reason: Reason, _ comment: Comment?, sourceLocation: SourceLocation
) -> RPCError? {
  switch outcome {
  case .success:
    Issue.record(
      "expected \(reason), the call succeeded. \(comment?.rawValue ?? "")", sourceLocation: sourceLocation)
    return nil
  case .failure(let error):
    #expect(error.reason == reason.name, comment, sourceLocation: sourceLocation)
    #expect(error.code == reason.code, comment, sourceLocation: sourceLocation)
    return error
  }
}

extension CallContext {
  /// A call of AdminService's `method` (its short name) with `adminKey`, as the harnesses
  /// make to set a project up before the test runs.
  static func adminSetup(_ method: String, adminKey: String, peerIP: String = "127.0.0.1") -> CallContext {
    CallContext(
      method: "/\(AdminService.name)/\(method)", metadata: ["authorization": "Bearer \(adminKey)"],
      peerIP: peerIP, requestID: "setup")
  }
}

/// Parses a JSON text into an object.
func jsonObject(_ text: String) throws -> [String: JSONValue] {
  try #require(JSONValue(jsonBytes: Array(text.utf8))?.objectValue)
}

extension Character {
  var isASCIIAlphanumeric: Bool { isASCII && (isLetter || isNumber) }
  var isBase64URL: Bool { isASCIIAlphanumeric || self == "-" || self == "_" }
}
