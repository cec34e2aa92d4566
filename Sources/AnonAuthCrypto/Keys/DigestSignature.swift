import COpenSSL

/// SHA-256 signatures through `EVP_DigestSign*`/`EVP_DigestVerify*`: RS256 (PKCS#1 v1.5 is
/// the RSA default) and ES256 (DER-encoded ECDSA) share this code.
enum DigestSignature {
  /// The signature of `message` with the private key `key`, in OpenSSL's native format.
  static func sign(_ message: [UInt8], key: PKeyHandle) throws(CryptoError) -> [UInt8] {
    ERR_clear_error()
    guard let ctx = EVP_MD_CTX_new() else { throw CryptoError("EVP_MD_CTX_new") }
    defer { EVP_MD_CTX_free(ctx) }
    guard EVP_DigestSignInit(ctx, nil, EVP_sha256(), nil, key.pointer) == 1 else {
      throw CryptoError("EVP_DigestSignInit")
    }
    var length = 0
    guard EVP_DigestSign(ctx, nil, &length, message, message.count) == 1 else {
      throw CryptoError("EVP_DigestSign")
    }
    var signature = [UInt8](repeating: 0, count: length)
    guard EVP_DigestSign(ctx, &signature, &length, message, message.count) == 1 else {
      throw CryptoError("EVP_DigestSign")
    }
    return Array(signature[..<length])
  }

  /// True only for a valid signature. A failed check leaves errors on this thread's
  /// OpenSSL queue, which would confuse the next TLS call here: clear them.
  static func verify(_ signature: [UInt8], message: [UInt8], key: PKeyHandle) -> Bool {
    ERR_clear_error()
    defer { ERR_clear_error() }
    guard !signature.isEmpty, let ctx = EVP_MD_CTX_new() else { return false }
    defer { EVP_MD_CTX_free(ctx) }
    guard EVP_DigestVerifyInit(ctx, nil, EVP_sha256(), nil, key.pointer) == 1 else { return false }
    return EVP_DigestVerify(ctx, signature, signature.count, message, message.count) == 1
  }
}
