import AnonAuthCrypto
import Testing

@Suite struct ECKeyTests {
  let message = Array("eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ1In0".utf8)

  @Test func signAndVerifyRawSignatures() throws {
    let key = try TestKeys.ec.get()
    for _ in 0..<32 {  // r or s with leading zeros must still be 32 bytes each
      let signature = try key.sign(message)
      #expect(signature.count == 64)
      #expect(key.publicKey.verify(jwsSignature: signature, message: message))
    }
  }

  @Test func wrongKeyFlippedBitsAndBadLengthsFail() throws {
    let key = try TestKeys.ec.get()
    let other = try ECP256SigningKey.generate()
    let signature = try key.sign(message)
    #expect(!other.publicKey.verify(jwsSignature: signature, message: message))
    #expect(!key.publicKey.verify(jwsSignature: flippingBit(3, of: signature), message: message))
    #expect(!key.publicKey.verify(jwsSignature: flippingBit(260, of: signature), message: message))
    #expect(!key.publicKey.verify(jwsSignature: signature, message: flippingBit(0, of: message)))
    #expect(!key.publicKey.verify(jwsSignature: Array(signature.dropLast()), message: message))
    #expect(!key.publicKey.verify(jwsSignature: signature + [0], message: message))
    #expect(!key.publicKey.verify(jwsSignature: [UInt8](repeating: 0, count: 64), message: message))
    #expect(!key.publicKey.verify(jwsSignature: [], message: message))
  }

  @Test func jwkRoundTrip() throws {
    let key = try TestKeys.ec.get()
    let jwk = key.jwk(kid: "e1")
    #expect(jwk["kty"] == "EC")
    #expect(jwk["crv"] == "P-256")
    #expect(jwk["alg"] == "ES256")
    #expect(jwk["kid"] == "e1")
    let restored = try ECP256PublicKey(jwk: try #require(jwk["x"]), y: try #require(jwk["y"]))
    #expect(restored.jwk(kid: "e1") == jwk)
    #expect(restored.verify(jwsSignature: try key.sign(message), message: message))
  }

  @Test func jwkRejectsPointsOffTheCurveAndBadLengths() throws {
    let jwk = try TestKeys.ec.get().jwk(kid: "e1")
    let x = try #require(jwk["x"])
    let y = try #require(jwk["y"])
    let yBytes = try #require(Base64URL.decode(y))
    #expect(throws: CryptoError.self) {
      try ECP256PublicKey(jwk: x, y: Base64URL.encode(flippingBit(0, of: yBytes)))
    }
    #expect(throws: CryptoError.self) {
      try ECP256PublicKey(jwk: x, y: Base64URL.encode(Array(yBytes.dropFirst())))
    }
    #expect(throws: CryptoError.self) { try ECP256PublicKey(jwk: x, y: Base64URL.encode(yBytes + [0])) }
    #expect(throws: CryptoError.self) { try ECP256PublicKey(jwk: x, y: y + "=") }
    let zero = Base64URL.encode([UInt8](repeating: 0, count: 32))
    #expect(throws: CryptoError.self) { try ECP256PublicKey(jwk: zero, y: zero) }
  }
}
