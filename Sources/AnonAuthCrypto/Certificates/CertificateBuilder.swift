import COpenSSL
import Foundation

/// Builds one X.509 v3 certificate, self-signed or signed by a CA. Shared by the `--dev`
/// TLS identity, the certificates that publish signing keys and the cluster's node
/// certificates, so the serial, validity and extension code exists once.
struct CertificateBuilder {
  /// Subject (and issuer) entries in order, e.g. `[("CN", "localhost")]`.
  var subject: [(field: String, value: String)]
  var notBefore: Date
  var notAfter: Date
  /// Extensions in OpenSSL's config syntax, e.g. `(NID_key_usage, "critical,digitalSignature")`.
  var extensions: [(nid: Int32, value: String)]

  /// The certificate signed with SHA-256 by `key`, which also becomes its public key.
  func selfSignedPEM(key: OpaquePointer) throws(CryptoError) -> String {
    try signedPEM(subjectKey: key, issuer: nil, issuerKey: key)
  }

  /// The certificate for `subjectKey`'s public key, signed with SHA-256 by `issuerKey`,
  /// whose certificate `issuer` is (nil: self-signed, `issuerKey` is `subjectKey`).
  func signedPEM(
    subjectKey: OpaquePointer, issuer: OpaquePointer?, issuerKey: OpaquePointer
  ) throws(CryptoError) -> String {
    guard notBefore < notAfter else { throw CryptoError("certificate", reason: "validity is empty") }
    ERR_clear_error()
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

    var start = time_t(notBefore.timeIntervalSince1970)
    var end = time_t(notAfter.timeIntervalSince1970)
    guard X509_time_adj_ex(X509_getm_notBefore(cert), 0, 0, &start) != nil,
      X509_time_adj_ex(X509_getm_notAfter(cert), 0, 0, &end) != nil
    else { throw CryptoError("certificate validity") }

    guard let name = X509_get_subject_name(cert) else { throw CryptoError("certificate name") }
    for entry in subject {
      guard X509_NAME_add_entry_by_txt(name, entry.field, MBSTRING_UTF8, entry.value, -1, -1, 0) == 1
      else { throw CryptoError("certificate name \(entry.field)") }
    }
    let issuerName = issuer.map { X509_get_subject_name($0) } ?? name
    guard X509_set_issuer_name(cert, issuerName) == 1, X509_set_pubkey(cert, subjectKey) == 1 else {
      throw CryptoError("certificate issuer")
    }

    var ctx = X509V3_CTX()
    X509V3_set_ctx(&ctx, issuer ?? cert, cert, nil, nil, 0)
    for (nid, value) in extensions {
      guard let ext = X509V3_EXT_conf_nid(nil, &ctx, nid, value) else {
        throw CryptoError("certificate extension \(value)")
      }
      defer { X509_EXTENSION_free(ext) }
      guard X509_add_ext(cert, ext, -1) == 1 else { throw CryptoError("X509_add_ext") }
    }
    guard X509_sign(cert, issuerKey, EVP_sha256()) > 0 else { throw CryptoError("X509_sign") }
    return try PEM.write { PEM_write_bio_X509($0, cert) }
  }
}
