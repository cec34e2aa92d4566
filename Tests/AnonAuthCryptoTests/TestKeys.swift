import AnonAuthCrypto

/// Keys made once per test run: RSA generation costs tens of milliseconds.
enum TestKeys {
  static let rsa = Result { () throws(CryptoError) in try RSASigningKey.generate() }
  static let otherRSA = Result { () throws(CryptoError) in try RSASigningKey.generate() }
  static let ec = Result { () throws(CryptoError) in try ECP256SigningKey.generate() }
}
