import COpenSSL

/// SHA-256, for storing refresh tokens and admin keys as hashes and for key ids.
public enum SHA256 {
  /// The 32-byte digest of `bytes`.
  ///
  /// Not `throws`: with the default provider loaded (which the process needs for TLS
  /// anyway) SHA-256 over a memory buffer cannot fail, and callers hash in places where an
  /// error would have nowhere sensible to go. A broken OpenSSL installation stops here.
  public static func hash(_ bytes: [UInt8]) -> [UInt8] {
    var out = [UInt8](repeating: 0, count: 32)
    var length: UInt32 = 0
    ERR_clear_error()
    let ok = EVP_Digest(bytes, bytes.count, &out, &length, EVP_sha256(), nil)
    precondition(ok == 1 && length == 32, "\(CryptoError("EVP_Digest SHA-256"))")
    return out
  }
}
