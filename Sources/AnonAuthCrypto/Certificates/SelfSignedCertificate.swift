import COpenSSL
import CShims
import Foundation

/// The `--dev` TLS identity: an ECDSA P-256 key and a self-signed certificate for
/// localhost, 127.0.0.1 and ::1, valid from a day before it was made (clock skew) until
/// ten years after (docs/protocol.md §10).
public struct SelfSignedCertificate: Sendable {
  public let certificatePEM: String
  public let privateKeyPEM: String

  /// Makes a new key and certificate.
  /// - Parameter names: subjectAltName entries in OpenSSL's syntax.
  public static func make(
    commonName: String = "localhost",
    names: String = "DNS:localhost,IP:127.0.0.1,IP:::1",
    now: Date = Date()
  ) throws(CryptoError) -> SelfSignedCertificate {
    ERR_clear_error()
    guard let key = anonauth_ec_p256_keygen() else { throw CryptoError("EC P-256 keygen") }
    defer { EVP_PKEY_free(key) }

    let day: TimeInterval = 86_400
    let start = now.addingTimeInterval(-day)
    // Ten years after `now`, leap days too.
    let end = now.addingTimeInterval((10 * 365 + 3) * day)
    let builder = CertificateBuilder(
      subject: [("CN", commonName), ("O", "AnonAuth development")],
      notBefore: start, notAfter: end,
      extensions: [
        (NID_basic_constraints, "critical,CA:TRUE"),
        (NID_key_usage, "critical,digitalSignature,keyCertSign"),
        (NID_ext_key_usage, "serverAuth"),
        (NID_subject_key_identifier, "hash"),
        (NID_authority_key_identifier, "keyid:always"),
        (NID_subject_alt_name, names),
      ])
    let certPEM = try builder.selfSignedPEM(key: key)
    let keyPEM = try PEM.write { PEM_write_bio_PrivateKey($0, key, nil, nil, 0, nil, nil) }
    return SelfSignedCertificate(certificatePEM: certPEM, privateKeyPEM: keyPEM)
  }
}
