import AnonAuthCrypto
import AnonAuthStore
import AnonAuthWire
import Testing

@testable import AnonAuthService

/// Custom claims keep the acceptance they had with Foundation's parser (trailing commas),
/// both as input and as stored text, while everything else is read strictly.
@Suite struct StoredCustomClaimsTests {
  @Test(arguments: ["{\"plan\":\"pro\",}", "{\"plan\":\"pro\",\"roles\":[\"a\",\"b\",],}"])
  func claimsStoredByOlderVersionsStillReachTheToken(stored: String) {
    var account = AccountRecord(projectID: "p", localID: "uid-1", isAnonymous: false, createdAtMs: 0)
    account.customClaimsJSON = stored
    let claims = IDTokenClaims.make(
      issuerPrefix: "https://securetoken.google.com/", project: ProjectRecord(projectID: "p", createdAtMs: 0),
      account: account, identities: [], signInProvider: "password", authTime: 1, issuedAt: 1)
    #expect(claims["plan"] == "pro")
    #expect(claims["sub"] == "uid-1")
  }

  @Test func setCustomClaimsAcceptsWhatItAcceptedBefore() throws {
    try CustomClaimsPolicy.check("{\"plan\":\"pro\",}")
    #expect(throws: RPCError.self) { try CustomClaimsPolicy.check("{\"plan\":") }
    #expect(throws: RPCError.self) { try CustomClaimsPolicy.check("[1,]") }
    #expect(JSONValue(lenientJSONBytes: Array("{\"plan\":\"pro\",}".utf8)) == ["plan": "pro"])
    // Strictly, the same text is refused: tokens and providers' answers are read that way.
    #expect(JSONValue(jsonBytes: Array("{\"plan\":\"pro\",}".utf8)) == nil)
  }
}
