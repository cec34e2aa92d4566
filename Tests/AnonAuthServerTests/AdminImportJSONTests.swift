import AnonAuthCrypto
import AnonAuthWire
import Testing

@testable import AnonAuthServer

/// Firebase's `accounts:batchCreate` rows in native terms, and the legacy paths' table.
@Suite struct AdminImportJSONTests {
  @Test("A Firebase user object becomes an ImportedAccount; base64 may be standard or URL-safe")
  func row() throws {
    let user: JSONValue = [
      "localId": "u1", "email": "a@example.com", "emailVerified": true, "displayName": "A",
      "photoUrl": "https://example.com/a.png", "disabled": true, "createdAt": "1600000000000",
      "lastLoginAt": 1_600_000_100_000, "customAttributes": #"{"plan":"pro"}"#,
      "passwordHash": "-_-_", "salt": "+/+/",
      "providerUserInfo": [["providerId": "google.com", "rawId": "1098", "email": "g@example.com"]],
    ]
    let account = try AdminImportJSON.account(user)
    #expect(account.localId == "u1" && account.email == "a@example.com" && account.emailVerified)
    #expect(account.disabled && account.displayName == "A" && account.photoUrl == "https://example.com/a.png")
    #expect(account.createdAtMs == 1_600_000_000_000 && account.lastSignInAtMs == 1_600_000_100_000)
    #expect(account.customClaimsJson == #"{"plan":"pro"}"#)
    #expect(account.passwordHash == [0xFB, 0xFF, 0xBF] && account.salt == [0xFB, 0xFF, 0xBF])
    #expect(account.providers.map(\.providerId) == ["google.com"] && account.providers[0].rawId == "1098")
  }

  @Test("Rows that cannot be decoded are refused with a message naming the field")
  func refusals() {
    let rows: [(JSONValue, String)] = [
      ("not an object", "INVALID_FIELD"),
      (["localId": 5], "INVALID_FIELD : localId"),
      (["localId": "u", "passwordHash": "not base64!"], "INVALID_FIELD : passwordHash"),
      (["localId": "u", "createdAt": "soon"], "INVALID_FIELD : createdAt"),
      (["localId": "u", "phoneNumber": "+15550100"], "INVALID_PHONE_NUMBER"),
      (["localId": "u", "providerUserInfo": "x"], "INVALID_FIELD : providerUserInfo"),
    ]
    for (row, message) in rows {
      do throws(AdminImportJSON.RowRefusal) {
        _ = try AdminImportJSON.account(row)
        Issue.record("\(row) was accepted")
      } catch {
        #expect(error.message.hasPrefix(message), "\(row)")
      }
    }
  }

  @Test("Every legacy method is served under both layouts; nothing else is under relyingparty")
  func legacyTable() {
    let methods = [
      "signupNewUser", "getAccountInfo", "verifyPassword", "verifyAssertion", "setAccountInfo",
      "deleteAccount", "getOobConfirmationCode", "resetPassword", "emailLinkSignin",
    ]
    for method in methods {
      for prefix in ["/www.googleapis.com", ""] {
        let path = FirebaseAPIPath("\(prefix)/identitytoolkit/v3/relyingparty/\(method)")
        let matches = FirebaseAPI.allEndpoints.filter { $0.pattern.match(path.segments) != nil }
        #expect(matches.map(\.httpMethod) == ["POST"], "\(prefix) \(method)")
      }
    }
    let unknown = FirebaseAPIPath("/www.googleapis.com/identitytoolkit/v3/relyingparty/createAuthUri")
    #expect(FirebaseAPI.allEndpoints.allSatisfy { $0.pattern.match(unknown.segments) == nil })
  }

  @Test("Every admin call is served under /v1/projects/{project} in both layouts")
  func adminTable() {
    let calls = [
      ("accounts", "POST"), ("accounts:lookup", "POST"), ("accounts:batchGet", "GET"),
      ("accounts:update", "POST"),
      ("accounts:delete", "POST"), ("accounts:batchDelete", "POST"), ("accounts:batchCreate", "POST"),
    ]
    for (call, method) in calls {
      for prefix in ["", "/identitytoolkit.googleapis.com"] {
        let path = FirebaseAPIPath("\(prefix)/v1/projects/demo-project/\(call)")
        let matches = FirebaseAPI.allEndpoints.compactMap { endpoint in
          endpoint.pattern.match(path.segments).map { (endpoint.httpMethod, $0["project"]) }
        }
        #expect(
          matches.count == 1 && matches.first?.0 == method && matches.first?.1 == "demo-project", "\(call)")
      }
    }
  }
}
