import COpenSSL

/// HMAC-SHA256 (RFC 2104), for keyed fingerprints of secrets.
public enum HMACSHA256 {
  /// The 32-byte authentication code of `message` under `key`.
  ///
  /// Not `throws`, for the same reason as `SHA256.hash`: with the default provider loaded
  /// the computation cannot fail on any input.
  public static func authenticationCode(key: [UInt8], message: [UInt8]) -> [UInt8] {
    var out = [UInt8](repeating: 0, count: 32)
    var length = 0
    ERR_clear_error()
    let result = EVP_Q_mac(
      nil, "HMAC", nil, "SHA256", nil, key, key.count, message, message.count, &out, out.count,
      &length)
    precondition(result != nil && length == 32, "\(CryptoError("EVP_Q_mac HMAC-SHA256"))")
    return out
  }
}
