import AnonAuthCrypto
import Testing

@Suite struct RSAKeyTests {
  let message = Array("eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ1In0".utf8)

  @Test func signAndVerify() throws {
    let key = try TestKeys.rsa.get()
    let signature = try key.sign(message)
    #expect(signature.count == 256)
    #expect(key.publicKey.verify(signature: signature, message: message))
    // PKCS#1 v1.5 is deterministic.
    #expect(try key.sign(message) == signature)
  }

  @Test func wrongKeyFlippedBitsAndOtherMessagesFail() throws {
    let key = try TestKeys.rsa.get()
    let other = try TestKeys.otherRSA.get()
    let signature = try key.sign(message)
    #expect(!other.publicKey.verify(signature: signature, message: message))
    #expect(!key.publicKey.verify(signature: flippingBit(0, of: signature), message: message))
    #expect(!key.publicKey.verify(signature: flippingBit(2047, of: signature), message: message))
    #expect(!key.publicKey.verify(signature: signature, message: flippingBit(5, of: message)))
    #expect(!key.publicKey.verify(signature: Array(signature.dropLast()), message: message))
    #expect(!key.publicKey.verify(signature: [], message: message))
  }

  @Test func pkcs8RoundTrip() throws {
    let key = try TestKeys.rsa.get()
    let der = try key.pkcs8DER()
    let restored = try RSASigningKey(pkcs8DER: der)
    #expect(try restored.pkcs8DER() == der)
    #expect(key.publicKey.verify(signature: try restored.sign(message), message: message))
  }

  @Test func pkcs8RejectsGarbageAndTrailingBytes() throws {
    let der = try TestKeys.rsa.get().pkcs8DER()
    #expect(throws: CryptoError.self) { try RSASigningKey(pkcs8DER: []) }
    #expect(throws: CryptoError.self) { try RSASigningKey(pkcs8DER: der + [0]) }
    #expect(throws: CryptoError.self) { try RSASigningKey(pkcs8DER: Array(der.dropLast())) }
    #expect(throws: CryptoError.self) { try RSASigningKey(pkcs8DER: Array(repeating: 0x30, count: 64)) }
  }

  @Test(arguments: [512, 1024, 2047, 16384])
  func weakOrHugeSizesAreRefused(bits: Int) {
    #expect(throws: CryptoError.self) { try RSASigningKey.generate(bits: bits) }
  }

  @Test func jwkShape() throws {
    let jwk = try TestKeys.rsa.get().publicKey.jwk(kid: "k1")
    #expect(jwk["kty"] == "RSA")
    #expect(jwk["alg"] == "RS256")
    #expect(jwk["use"] == "sig")
    #expect(jwk["kid"] == "k1")
    #expect(jwk["e"] == "AQAB")
    let n = try #require(jwk["n"].flatMap { Base64URL.decode($0) })
    #expect(n.count == 256)
    #expect(n.first != 0)
  }

  @Test func jwkRoundTripVerifiesTheOriginalKeysSignature() throws {
    let key = try TestKeys.rsa.get()
    let jwk = key.publicKey.jwk(kid: "k1")
    let restored = try RSAPublicKey(jwk: try #require(jwk["n"]), e: try #require(jwk["e"]))
    #expect(restored.jwk(kid: "k1") == jwk)
    #expect(restored.verify(signature: try key.sign(message), message: message))
  }

  @Test func jwkRejectsBadMaterial() throws {
    let jwk = try TestKeys.rsa.get().publicKey.jwk(kid: "k1")
    let n = try #require(jwk["n"])
    let bytes = try #require(Base64URL.decode(n))
    // Not base64url, too small, even modulus, even exponent, empty.
    #expect(throws: CryptoError.self) { try RSAPublicKey(jwk: n + "=", e: "AQAB") }
    #expect(throws: CryptoError.self) {
      try RSAPublicKey(jwk: Base64URL.encode(Array(bytes.prefix(128))), e: "AQAB")
    }
    var even = bytes
    even[even.count - 1] &= 0xfe
    #expect(throws: CryptoError.self) { try RSAPublicKey(jwk: Base64URL.encode(even), e: "AQAB") }
    #expect(throws: CryptoError.self) { try RSAPublicKey(jwk: n, e: "AQAA") }
    #expect(throws: CryptoError.self) { try RSAPublicKey(jwk: "", e: "AQAB") }
    #expect(throws: CryptoError.self) { try RSAPublicKey(jwk: n, e: "") }
  }

  @Test func pemRejectsGarbageAndNonRSAKeys() throws {
    #expect(throws: CryptoError.self) { try RSAPublicKey(pem: "") }
    #expect(throws: CryptoError.self) {
      try RSAPublicKey(pem: "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n")
    }
    #expect(throws: CryptoError.self) {
      try RSAPublicKey(pem: "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n")
    }
    // The --dev certificate holds an EC key.
    let dev = try SelfSignedCertificate.make()
    #expect(throws: CryptoError.self) { try RSAPublicKey(pem: dev.certificatePEM) }
  }

  @Test func signsConcurrently() async throws {
    let key = try TestKeys.rsa.get()
    let message = self.message
    let results = await withTaskGroup(of: Bool.self) { group in
      for _ in 0..<8 {
        group.addTask {
          guard let signature = try? key.sign(message) else { return false }
          return key.publicKey.verify(signature: signature, message: message)
        }
      }
      return await group.reduce(into: [Bool]()) { $0.append($1) }
    }
    #expect(results == Array(repeating: true, count: 8))
  }
}
