import COpenSSL
import CShims
import Foundation

/// The `--dev` TLS identity: an ECDSA P-256 key and a self-signed certificate for
/// localhost, 127.0.0.1 and ::1, valid from a day before it was made (clock skew) until
/// ten years after (PROTOCOL.md section 6).
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
    guard let cert = X509_new() else { throw CryptoError("X509_new") }
    defer { X509_free(cert) }

    let serial = try SecureRandom.bytes(16)
    guard let bn = BN_bin2bn(serial, Int32(serial.count), nil) else { throw CryptoError("serial") }
    defer { BN_free(bn) }
    // A positive serial: clear the top bit.
    BN_clear_bit(bn, 127)
    guard X509_set_version(cert, 2) == 1,
      BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert)) != nil
    else { throw CryptoError("certificate serial") }

    let start = time_t(now.timeIntervalSince1970) - 86_400
    let end = start + 86_400 + 10 * 365 * 86_400 + 3 * 86_400  // ten years, leap days too
    var startCopy = start
    var endCopy = end
    guard X509_time_adj_ex(X509_getm_notBefore(cert), 0, 0, &startCopy) != nil,
      X509_time_adj_ex(X509_getm_notAfter(cert), 0, 0, &endCopy) != nil
    else { throw CryptoError("certificate validity") }

    guard let name = X509_get_subject_name(cert),
      X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, commonName, -1, -1, 0) == 1,
      X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC, "AnonAuth development", -1, -1, 0) == 1,
      X509_set_issuer_name(cert, name) == 1,
      X509_set_pubkey(cert, key) == 1
    else { throw CryptoError("certificate name") }

    var ctx = X509V3_CTX()
    X509V3_set_ctx(&ctx, cert, cert, nil, nil, 0)
    let extensions: [(Int32, String)] = [
      (NID_basic_constraints, "critical,CA:TRUE"),
      (NID_key_usage, "critical,digitalSignature,keyCertSign"),
      (NID_ext_key_usage, "serverAuth"),
      (NID_subject_key_identifier, "hash"),
      (NID_authority_key_identifier, "keyid:always"),
      (NID_subject_alt_name, names),
    ]
    for (nid, value) in extensions {
      guard let ext = X509V3_EXT_conf_nid(nil, &ctx, nid, value) else {
        throw CryptoError("certificate extension \(value)")
      }
      defer { X509_EXTENSION_free(ext) }
      guard X509_add_ext(cert, ext, -1) == 1 else { throw CryptoError("X509_add_ext") }
    }
    guard X509_sign(cert, key, EVP_sha256()) > 0 else { throw CryptoError("X509_sign") }

    let certPEM = try PEM.write { PEM_write_bio_X509($0, cert) }
    let keyPEM = try PEM.write { PEM_write_bio_PrivateKey($0, key, nil, nil, 0, nil, nil) }
    return SelfSignedCertificate(certificatePEM: certPEM, privateKeyPEM: keyPEM)
  }
}

/// PEM text out of OpenSSL's writers, through a memory BIO.
enum PEM {
  static func write(_ body: (OpaquePointer?) -> Int32) throws(CryptoError) -> String {
    guard let bio = BIO_new(BIO_s_mem()) else { throw CryptoError("BIO_new") }
    defer { BIO_free(bio) }
    guard body(bio) == 1 else { throw CryptoError("PEM write") }
    var data: UnsafeMutablePointer<CChar>?
    let length = BIO_ctrl(bio, BIO_CTRL_INFO, 0, &data)
    guard let data, length > 0 else { throw CryptoError("PEM read") }
    return String(decoding: UnsafeRawBufferPointer(start: data, count: length), as: UTF8.self)
  }
}
