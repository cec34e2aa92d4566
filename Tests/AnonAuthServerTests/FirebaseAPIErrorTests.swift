import AnonAuthCrypto
import AnonAuthService
import AnonAuthWire
import Testing

@testable import AnonAuthServer

/// Firebase's error body for every kind of failure: native reasons through the
/// catalogue's Firebase column, bodies that do not decode, paths and methods.
@Suite struct FirebaseAPIErrorTests {
  @Test func nativeReasonsBecomeFirebasesBody() async throws {
    try await FirebaseAPIHarness.with { h in
      _ = await h.post("/v1/accounts:signUp", ["email": "taken@example.com", "password": "secret-1"])
      let taken = await h.post("/v1/accounts:signUp", ["email": "taken@example.com", "password": "secret-1"])
      #expect(taken.status == 400)
      #expect(
        taken.json
          == [
            "error": [
              "code": 400, "message": "EMAIL_EXISTS",
              "errors": [["message": "EMAIL_EXISTS", "domain": "global", "reason": "invalid"]],
            ]
          ])
      let weak = await h.post("/v1/accounts:signUp", ["email": "w@example.com", "password": "x"])
      #expect(weak.errorMessage?.hasPrefix("WEAK_PASSWORD : ") == true)
      let badKey = await h.post("/v1/accounts:signUp", [:], key: "nope")
      #expect(
        badKey.status == 400 && badKey.errorMessage == "API key not valid. Please pass a valid API key.")
      let badToken = await h.post("/v1/accounts:lookup", ["idToken": "not.a.token"])
      #expect(badToken.errorMessage == "INVALID_ID_TOKEN")
      #expect(await h.post("/v1/accounts:lookup", [:]).errorMessage == "MISSING_ID_TOKEN")
      #expect(await h.post("/v1/token", ["refresh_token": "x"]).errorMessage == "MISSING_GRANT_TYPE")
    }
  }

  @Test(arguments: [
    (Array("{nope".utf8), "not JSON"), ([0x7B, 0x22, 0x61, 0x22, 0x3A, 0x22, 0xFF, 0x22, 0x7D], "not UTF-8"),
    (
      Array(String(repeating: "[", count: 600).utf8) + Array(String(repeating: "]", count: 600).utf8),
      "nests deeper"
    ),
    (Array("[1]".utf8), "not a JSON object"),
  ])
  func bodiesThatDoNotDecodeAre400InvalidArgument(body: [UInt8], detail: String) async throws {
    try await FirebaseAPIHarness.with { h in
      let answer = await h.send("/v1/accounts:signUp", body: body)
      #expect(answer.status == 400)
      #expect(answer.json?["error"]?["status"] == "INVALID_ARGUMENT")
      #expect(answer.errorMessage?.hasPrefix("Invalid JSON payload received.") == true)
      #expect(answer.errorMessage?.contains(detail) == true)
      #expect(h.callRecords.last?.nativeMethod == nil)
    }
  }

  @Test func aMemberOfTheWrongTypeIsNamed() async throws {
    try await FirebaseAPIHarness.with { h in
      let answer = await h.post("/v1/accounts:signInWithPassword", ["email": 5, "password": "x"])
      #expect(answer.status == 400)
      #expect(answer.errorMessage?.contains("'email' (TYPE_STRING)") == true)
    }
  }

  @Test func unknownPathsAre404AndOtherMethods405() async throws {
    try await FirebaseAPIHarness.with { h in
      let missing = await h.post("/v1/accounts:signInWithCustomToken", [:])
      #expect(missing.status == 404 && missing.json?["error"]?["status"] == "NOT_FOUND")
      let wrong = await h.send("/v1/accounts:signUp", method: "GET", body: [])
      #expect(wrong.status == 405 && wrong.header("allow") == "POST")
    }
  }

  @Test func retryAfterComesFromTheNativeDetail() {
    let error = FirebaseError(
      RPCError(.tooManyAttempts, "slow down", details: ["retry_after_seconds": "42"]))
    #expect(error.status == 400)
    #expect(error.message == "TOO_MANY_ATTEMPTS_TRY_LATER : slow down")
    #expect(error.reply.headers.contains { $0.name == "retry-after" && $0.value == "42" })
  }

  @Test func forwardedForBecomesTheEndUserIPMetadata() {
    let request = HTTPRequest(
      method: "POST", path: "/v1/accounts:signUp", headers: [("x-forwarded-for", "203.0.113.9, 198.51.100.2")]
    )
    let metadata = FirebaseAPI.Call.metadata(request, query: ["key": "k"], requestID: "r")
    #expect(metadata["x-end-user-ip"] == "198.51.100.2")
    #expect(metadata["x-api-key"] == "k")
    let header = HTTPRequest(method: "POST", path: "/", headers: [("x-goog-api-key", "h")])
    #expect(FirebaseAPI.Call.metadata(header, query: [:], requestID: "r")["x-api-key"] == "h")
  }
}
