import Testing

@testable import AnonAuthCrypto

/// `decodedWholeDER`, under both of its users: a DER value followed by anything more is
/// refused, never read as its prefix.
@Suite struct WholeDERTests {
  @Test func anECDSASignatureWithTrailingBytesIsRefused() throws {
    let key = try ECP256SigningKey.generate()
    let der = try DigestSignature.sign(Array("message".utf8), key: key.key)
    let raw = try #require(ECDSASignatureFormat.raw(fromDER: der))
    #expect(raw.count == 64)
    #expect(ECDSASignatureFormat.raw(fromDER: der + [0]) == nil)
    #expect(ECDSASignatureFormat.raw(fromDER: Array(der.dropLast())) == nil)
  }

  @Test func aPublicKeyWithTrailingBytesIsRefused() throws {
    let key = try RSASigningKey.generate()
    let der = try key.key.publicKeyDER()
    #expect(try PKeyHandle.fromPublicKeyDER(der).isA("RSA"))
    #expect(throws: CryptoError.self) { try PKeyHandle.fromPublicKeyDER(der + [0x05, 0x00]) }
    #expect(throws: CryptoError.self) { try PKeyHandle.fromPublicKeyDER(Array(der.dropLast())) }
  }
}
