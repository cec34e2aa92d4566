import COpenSSL
import Foundation

/// X.509 certificates for publishing signing keys: Firebase's `x509_certificates` endpoint
/// maps each kid to a PEM certificate, and the Admin SDKs read the RSA key out of it.
public enum X509Certificate {
  /// A self-signed certificate (SHA-256 with RSA) for `key`'s public key.
  /// - Parameters:
  ///   - commonName: the subject and issuer CN (Firebase uses
  ///     `securetoken.system.gserviceaccount.com`).
  ///   - validFrom: the start of validity; make it a little before now for clock skew.
  ///   - seconds: how long it is valid; at least as long as tokens signed by the key live.
  /// - Returns: the certificate as PEM text.
  /// - Throws: `CryptoError` for a non-positive duration or an OpenSSL failure.
  public static func selfSigned(
    for key: RSASigningKey, commonName: String, validFrom: Date, validFor seconds: Int
  ) throws(CryptoError) -> String {
    guard seconds > 0 else { throw CryptoError("certificate", reason: "validity must be positive") }
    let builder = CertificateBuilder(
      subject: [("CN", commonName)],
      notBefore: validFrom, notAfter: validFrom.addingTimeInterval(TimeInterval(seconds)),
      extensions: [
        (NID_basic_constraints, "critical,CA:FALSE"),
        (NID_key_usage, "critical,digitalSignature"),
        (NID_ext_key_usage, "clientAuth"),
      ])
    return try builder.selfSignedPEM(key: key.key.pointer)
  }
}
