import AnonAuthCrypto
import Testing

@Suite struct JWTDecodeTests {
  static func b64(_ text: String) -> String { Base64URL.encode(Array(text.utf8)) }
  static let header = b64(#"{"alg":"RS256","kid":"k1","typ":"JWT"}"#)
  static let claims = b64(#"{"sub":"u"}"#)
  static let signature = Base64URL.encode([1, 2, 3])

  @Test(arguments: [
    ("", JWTError.notThreeParts),
    ("abc", .notThreeParts),
    ("\(header).\(claims)", .notThreeParts),
    ("\(header).\(claims).\(signature).", .notThreeParts),
    ("\(header).\(claims).\(signature).\(signature)", .notThreeParts),
    ("\(header)=.\(claims).\(signature)", .badBase64URL(.header)),
    ("\(header).\(claims)+.\(signature)", .badBase64URL(.claims)),
    ("\(header).\(claims).\(signature)*", .badBase64URL(.signature)),
    ("\(header).\(claims).a", .badBase64URL(.signature)),
    ("\(b64("not json")).\(claims).\(signature)", .notJSON(.header)),
    ("\(header).\(b64("{\"sub\":")).\(signature)", .notJSON(.claims)),
    ("\(b64("[1,2]")).\(claims).\(signature)", .notAnObject(.header)),
    ("\(b64("\"RS256\"")).\(claims).\(signature)", .notJSON(.header)),
    ("\(header).\(b64("[]")).\(signature)", .notAnObject(.claims)),
    ("\(b64(#"{"typ":"JWT"}"#)).\(claims).\(signature)", .missingAlgorithm),
    ("\(b64(#"{"alg":null}"#)).\(claims).\(signature)", .missingAlgorithm),
    ("\(b64(#"{"alg":256}"#)).\(claims).\(signature)", .missingAlgorithm),
    ("\(b64(#"{"alg":"none"}"#)).\(claims).", .unsignedToken),
    ("\(b64(#"{"alg":"None"}"#)).\(claims).\(signature)", .unsignedToken),
  ])
  func rejects(token: String, error: JWTError) {
    #expect(throws: error) { try JWT.decode(token) }
  }

  @Test func rejectsOversizeTokensBeforeParsing() {
    let token = "\(Self.header).\(Self.claims).\(String(repeating: "A", count: JWT.maximumLength))"
    #expect(throws: JWTError.tooLarge) { try JWT.decode(token) }
    #expect(throws: JWTError.tooLarge) {
      try JWT.decode(String(repeating: ".", count: JWT.maximumLength + 1))
    }
  }

  /// Foundation's parser stops at 512 levels, so hostile nesting is an error, not a crash.
  @Test func deeplyNestedClaimsAreRefused() {
    let nested = String(repeating: "[", count: 5000) + String(repeating: "]", count: 5000)
    let token = "\(Self.header).\(Self.b64("{\"a\":\(nested)}")).\(Self.signature)"
    #expect(throws: JWTError.notJSON(.claims)) { try JWT.decode(token) }
  }

  @Test func acceptsTheLargestAllowedToken() throws {
    let prefix = "\(Self.header).\(Self.claims)."
    var filler = String(repeating: "A", count: JWT.maximumLength - prefix.utf8.count)
    if filler.utf8.count % 4 == 1 { filler.removeLast() }
    let decoded = try JWT.decode(prefix + filler)
    #expect(decoded.claims == ["sub": "u"])
    #expect(decoded.signingInput == Array("\(Self.header).\(Self.claims)".utf8))
  }

  @Test func anEmptySignatureDecodesButNeverVerifies() throws {
    let decoded = try JWT.decode("\(Self.header).\(Self.claims).")
    #expect(decoded.signature.isEmpty)
    #expect(!decoded.verify(with: try TestKeys.rsa.get().publicKey))
  }

  @Test func tokenSignedWithAnUnknownAlgorithmDecodesButNeverVerifies() throws {
    let decoded = try JWT.decode("\(Self.b64(#"{"alg":"HS256"}"#)).\(Self.claims).\(Self.signature)")
    #expect(decoded.algorithm == "HS256")
    #expect(!decoded.verify(with: try TestKeys.rsa.get().publicKey))
    #expect(!decoded.verify(with: try TestKeys.ec.get().publicKey))
  }
}
