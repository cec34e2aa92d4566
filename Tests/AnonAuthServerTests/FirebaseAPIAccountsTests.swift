import AnonAuthCrypto
import AnonAuthService
import AnonAuthWire
import Testing

@testable import AnonAuthServer

/// The JSON API's answers in Firebase's names and types, on the real services: what
/// Firebase's SDKs decode (strings of seconds and milliseconds, one user, a providerId on
/// every provider item, the placeholder hash) and the record each request reports.
@Suite struct FirebaseAPIAccountsTests {
  @Test func anonymousSignUpThenLookup() async throws {
    try await FirebaseAPIHarness.with { h in
      let answer = await h.post("/v1/accounts:signUp", ["returnSecureToken": true])
      #expect(answer.status == 200)
      #expect(answer["kind"] == "identitytoolkit#SignupNewUserResponse")
      #expect(answer["expiresIn"] == "3600")
      let idToken = try #require(answer["idToken"]?.stringValue)
      #expect(answer["refreshToken"]?.stringValue?.isEmpty == false)
      let lookup = await h.post("/v1/accounts:lookup", ["idToken": .string(idToken)])
      #expect(lookup["kind"] == "identitytoolkit#GetAccountInfoResponse")
      let users = try #require(lookup["users"]?.arrayValue)
      #expect(users.count == 1)
      #expect(users[0]["localId"] == answer["localId"])
      #expect(users[0]["providerUserInfo"] == nil && users[0]["passwordHash"] == nil)
      #expect(Int64(users[0]["createdAt"]?.stringValue ?? "") == 1_800_000_000_000)
      #expect(users[0]["lastLoginAt"]?.stringValue != nil)
    }
  }

  @Test func signUpWithIdTokenLinksEmailAndPasswordKeepingTheUid() async throws {
    try await FirebaseAPIHarness.with { h in
      let anon = try await h.anonymous()
      let linked = await h.post(
        "/v1/accounts:signUp",
        ["idToken": .string(anon.idToken), "email": "ada@example.com", "password": "secret-1"])
      #expect(linked.status == 200)
      #expect(linked["localId"]?.stringValue == anon.uid)
      #expect(linked["email"] == "ada@example.com")
      let signedIn = await h.post(
        "/identitytoolkit.googleapis.com/v1/accounts:signInWithPassword",
        ["email": "ada@example.com", "password": "secret-1"])
      #expect(signedIn["localId"]?.stringValue == anon.uid)
      #expect(signedIn["registered"] == true)
      let user = try #require(
        await h.post("/v1/accounts:lookup", ["idToken": signedIn["idToken"] ?? nil])["users"]?.arrayValue?
          .first)
      #expect(user["passwordHash"] == .string(FirebaseUserJSON.passwordHashPlaceholder))
      #expect(
        user["providerUserInfo"] == [
          [
            "providerId": "password", "rawId": "ada@example.com",
            "federatedId": "ada@example.com", "email": "ada@example.com",
          ]
        ])
    }
  }

  @Test func tokenEndpointTakesFormsAndCamelCaseJSON() async throws {
    try await FirebaseAPIHarness.with { h in
      let anon = try await h.anonymous()
      let form = await h.send(
        "/v1/token", body: Array("grant_type=refresh_token&refresh_token=\(anon.refreshToken)".utf8),
        headers: [("content-type", "application/x-www-form-urlencoded")])
      #expect(form.status == 200)
      #expect(form["user_id"]?.stringValue == anon.uid)
      #expect(form["project_id"] == .string(FirebaseAPIHarness.projectID))
      #expect(form["token_type"] == "Bearer" && form["expires_in"] == "3600")
      #expect(form["access_token"] == form["id_token"])
      let next = try #require(form["refresh_token"]?.stringValue)
      let camel = await h.post(
        "/securetoken.googleapis.com/v1/token", ["grantType": "refresh_token", "refreshToken": .string(next)])
      #expect(camel.status == 200)
      // The rotated-away token is refused, with the native reason's message.
      let old = await h.post(
        "/v1/token", ["grant_type": "refresh_token", "refresh_token": .string(anon.refreshToken)])
      #expect(old.status == 400)
      #expect(old.errorMessage.map { ["TOKEN_EXPIRED", "INVALID_REFRESH_TOKEN"].contains($0) } == true)
    }
  }

  @Test func updateSetsTheNameAndDeleteRemovesTheAccount() async throws {
    try await FirebaseAPIHarness.with { h in
      let anon = try await h.anonymous()
      let updated = await h.post(
        "/v1/accounts:update",
        ["idToken": .string(anon.idToken), "displayName": "Ada", "returnSecureToken": true])
      #expect(updated.status == 200)
      #expect(updated["kind"] == "identitytoolkit#SetAccountInfoResponse")
      #expect(updated["displayName"] == "Ada" && updated["providerUserInfo"] == [])
      let deleted = await h.post("/v1/accounts:delete", ["idToken": .string(anon.idToken)])
      #expect(deleted["kind"] == "identitytoolkit#DeleteAccountResponse")
      let gone = await h.post("/v1/accounts:lookup", ["idToken": .string(anon.idToken)])
      #expect(gone.status == 400 && gone.errorMessage == "USER_NOT_FOUND")
    }
  }

  /// Metrics count the native method, the log line names the REST call.
  @Test func eachRequestReportsOneRecordWithBothNames() async throws {
    try await FirebaseAPIHarness.with { h in
      _ = try await h.anonymous()
      _ = await h.post(
        "/v1/accounts:signInWithPassword", ["email": "nobody@example.com", "password": "x-y-z-1"])
      _ = await h.post("/v1/nowhere", [:])
      let records = h.callRecords
      #expect(records.map(\.name) == ["accounts:signUp", "accounts:signInWithPassword", "unknown"])
      #expect(
        records.map(\.nativeMethod) == [
          AccountServiceMethods.signUp.path, AccountServiceMethods.signInWithPassword.path, nil,
        ])
      #expect(records.map(\.httpStatus) == [200, 400, 404])
      #expect(records[1].error?.reason == "INVALID_LOGIN_CREDENTIALS")
      #expect(records[2].error?.reason == "UNKNOWN_METHOD")
      #expect(records[0].fields.logFields["project_id"] == .string(FirebaseAPIHarness.projectID))
    }
  }
}
