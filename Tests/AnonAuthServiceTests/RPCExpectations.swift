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
  do {
    _ = try await body()
    Issue.record(
      "expected \(reason), the call succeeded. \(comment?.rawValue ?? "")", sourceLocation: sourceLocation)
    return nil
  } catch {
    #expect(error.reason == reason.name, comment, sourceLocation: sourceLocation)
    #expect(error.code == reason.code, comment, sourceLocation: sourceLocation)
    return error
  }
}

/// The same, for a check that does not suspend.
@discardableResult
func expectRPCError<T>(
  _ reason: Reason, _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation,
  sync body: () throws(RPCError) -> T
) -> RPCError? {
  do {
    _ = try body()
    Issue.record(
      "expected \(reason), the call succeeded. \(comment?.rawValue ?? "")", sourceLocation: sourceLocation)
    return nil
  } catch {
    #expect(error.reason == reason.name, comment, sourceLocation: sourceLocation)
    #expect(error.code == reason.code, comment, sourceLocation: sourceLocation)
    return error
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
