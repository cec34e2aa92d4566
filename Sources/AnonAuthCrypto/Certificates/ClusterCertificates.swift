import COpenSSL
import CShims
import Foundation

/// Certificates for the replicated store's mutual TLS: a cluster CA and node certificates
/// it signs (EC P-256, SHA-256). Each node certificate serves both ways (serverAuth and
/// clientAuth): a node accepts the others and connects to them with the same identity.
public enum ClusterCertificates {
  /// A certificate and its private key, both PEM.
  public struct Identity: Sendable {
    public let certificatePEM: String
    public let privateKeyPEM: String
  }

  /// The `--dev` cluster CA, the same on every node given the same master key: its key is
  /// derived from the master key (HKDF-SHA256, then an EC P-256 scalar), so each node of a
  /// local three-node cluster, sharing the master key but not its data dir, makes its own
  /// node certificate that the others trust. Development only: anyone with the master key
  /// can mint node certificates; production uses a CA whose key stays off the nodes.
  public static func developmentAuthority(masterKey: [UInt8]) throws(CryptoError) -> Identity {
    let key = try derivedP256Key(secret: masterKey, info: Array("anonauth dev cluster CA".utf8))
    defer { EVP_PKEY_free(key) }
    // Fixed validity, so that every node's copy of the CA certificate says the same.
    return try authority(
      key: key, commonName: "AnonAuth development cluster CA",
      notBefore: Date(timeIntervalSince1970: 1_767_225_600),  // 2026-01-01
      notAfter: Date(timeIntervalSince1970: 4_102_444_800))  // 2100-01-01
  }

  /// A new cluster CA with a key of its own.
  public static func authority(
    commonName: String, notBefore: Date, notAfter: Date
  ) throws(CryptoError) -> Identity {
    ERR_clear_error()
    guard let key = anonauth_ec_p256_keygen() else { throw CryptoError("EC P-256 keygen") }
    defer { EVP_PKEY_free(key) }
    return try authority(key: key, commonName: commonName, notBefore: notBefore, notAfter: notAfter)
  }

  /// A node certificate (new key) signed by `authority`.
  public static func node(
    commonName: String, authority: Identity, notBefore: Date, notAfter: Date
  ) throws(CryptoError) -> Identity {
    ERR_clear_error()
    guard let key = anonauth_ec_p256_keygen() else { throw CryptoError("EC P-256 keygen") }
    defer { EVP_PKEY_free(key) }
    guard let caCertificate = try readCertificate(authority.certificatePEM) else {
      throw CryptoError("cluster CA certificate")
    }
    defer { X509_free(caCertificate) }
    guard let caKey = try readKey(authority.privateKeyPEM) else { throw CryptoError("cluster CA key") }
    defer { EVP_PKEY_free(caKey) }
    let builder = CertificateBuilder(
      subject: [("CN", commonName), ("O", "AnonAuth cluster")],
      notBefore: notBefore, notAfter: notAfter,
      extensions: [
        (NID_basic_constraints, "critical,CA:FALSE"),
        (NID_key_usage, "critical,digitalSignature"),
        (NID_ext_key_usage, "serverAuth,clientAuth"),
        (NID_authority_key_identifier, "keyid:always"),
      ])
    let certificate = try builder.signedPEM(subjectKey: key, issuer: caCertificate, issuerKey: caKey)
    return Identity(certificatePEM: certificate, privateKeyPEM: try privateKeyPEM(key))
  }

  private static func authority(
    key: OpaquePointer, commonName: String, notBefore: Date, notAfter: Date
  ) throws(CryptoError) -> Identity {
    let builder = CertificateBuilder(
      subject: [("CN", commonName), ("O", "AnonAuth cluster")],
      notBefore: notBefore, notAfter: notAfter,
      extensions: [
        (NID_basic_constraints, "critical,CA:TRUE,pathlen:0"),
        (NID_key_usage, "critical,keyCertSign,cRLSign"),
        (NID_subject_key_identifier, "hash"),
      ])
    return Identity(
      certificatePEM: try builder.selfSignedPEM(key: key), privateKeyPEM: try privateKeyPEM(key))
  }

  private static func privateKeyPEM(_ key: OpaquePointer) throws(CryptoError) -> String {
    try PEM.write { PEM_write_bio_PrivateKey($0, key, nil, nil, 0, nil, nil) }
  }

  /// An EC P-256 key whose private scalar is HKDF-SHA256(`secret`, `info`) (RFC 5869, one
  /// block), counter-extended in the ~2^-32 case that the output is not below the curve's
  /// order. Loaded from a SEC1 private key without its public point, which OpenSSL
  /// computes.
  static func derivedP256Key(secret: [UInt8], info: [UInt8]) throws(CryptoError) -> OpaquePointer {
    let pseudorandom = HMACSHA256.authenticationCode(key: Array("anonauth-hkdf-salt".utf8), message: secret)
    for attempt in UInt8(1)...UInt8(16) {
      let scalar = HMACSHA256.authenticationCode(key: pseudorandom, message: info + [attempt])
      // SEC1 ECPrivateKey { version 1, privateKey OCTET STRING (32), [0] prime256v1 }.
      let der: [UInt8] =
        [0x30, 0x31, 0x02, 0x01, 0x01, 0x04, 0x20] + scalar
        + [0xa0, 0x0a, 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07]
      ERR_clear_error()
      let key: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
        var pointer: UnsafePointer<UInt8>? = buffer.baseAddress
        return d2i_AutoPrivateKey(nil, &pointer, buffer.count)
      }
      if let key { return key }
    }
    throw CryptoError("derived EC P-256 key")
  }

  private static func readCertificate(_ pem: String) throws(CryptoError) -> OpaquePointer? {
    try withBIO(pem) { PEM_read_bio_X509($0, nil, nil, nil) }
  }

  private static func readKey(_ pem: String) throws(CryptoError) -> OpaquePointer? {
    try withBIO(pem) { PEM_read_bio_PrivateKey($0, nil, nil, nil) }
  }

  private static func withBIO(
    _ pem: String, _ body: (OpaquePointer) -> OpaquePointer?
  ) throws(CryptoError) -> OpaquePointer? {
    ERR_clear_error()
    // The memory BIO reads the bytes in place: it lives only inside this closure.
    let result: OpaquePointer?? = Array(pem.utf8).withUnsafeBytes { raw in
      guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return nil }
      defer { BIO_free(bio) }
      return .some(body(bio))
    }
    guard let result else { throw CryptoError("BIO_new_mem_buf") }
    return result
  }
}
