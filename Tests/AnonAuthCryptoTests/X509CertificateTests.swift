import AnonAuthCrypto
import Foundation
import Testing

@Suite struct X509CertificateTests {
  @Test func certificateCarriesTheKeyThatVerifiesOurSignatures() throws {
    let key = try TestKeys.rsa.get()
    let pem = try X509Certificate.selfSigned(
      for: key, commonName: "securetoken.system.gserviceaccount.com",
      validFrom: Date(timeIntervalSince1970: 1_700_000_000), validFor: 14 * 86_400)
    #expect(pem.hasPrefix("-----BEGIN CERTIFICATE-----\n"))
    #expect(pem.hasSuffix("-----END CERTIFICATE-----\n"))
    let publicKey = try RSAPublicKey(pem: pem)
    #expect(publicKey.jwk(kid: "k") == key.publicKey.jwk(kid: "k"))
    let message = Array("header.payload".utf8)
    #expect(publicKey.verify(signature: try key.sign(message), message: message))
    #expect(!publicKey.verify(signature: try TestKeys.otherRSA.get().sign(message), message: message))
  }

  @Test(arguments: [0, -1])
  func emptyValidityIsRefused(seconds: Int) throws {
    #expect(throws: CryptoError.self) {
      try X509Certificate.selfSigned(
        for: try TestKeys.rsa.get(), commonName: "x", validFrom: Date(), validFor: seconds)
    }
  }

  @Test func devCertificateStillBuilds() throws {
    let made = try SelfSignedCertificate.make()
    #expect(made.certificatePEM.hasPrefix("-----BEGIN CERTIFICATE-----\n"))
    #expect(made.privateKeyPEM.hasPrefix("-----BEGIN PRIVATE KEY-----\n"))
  }
}
