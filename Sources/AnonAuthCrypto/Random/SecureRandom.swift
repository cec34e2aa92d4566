import COpenSSL

/// Bytes and identifiers from OpenSSL's CSPRNG, for everything an attacker must not
/// guess: uids, refresh tokens, keys.
public enum SecureRandom {
  /// `count` random bytes.
  /// - Throws: `CryptoError` if the generator is not seeded (it never should be).
  public static func bytes(_ count: Int) throws(CryptoError) -> [UInt8] {
    var out = [UInt8](repeating: 0, count: count)
    ERR_clear_error()
    if count > 0, RAND_bytes(&out, Int32(count)) != 1 { throw CryptoError("RAND_bytes") }
    return out
  }

  private static let alphanumerics = Array(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8)

  /// `length` characters of [A-Za-z0-9], unbiased (rejection sampling), as Firebase
  /// uids are.
  public static func alphanumeric(_ length: Int) throws(CryptoError) -> String {
    var out: [UInt8] = []
    out.reserveCapacity(length)
    while out.count < length {
      for byte in try bytes(length * 2) where byte < 248 {  // 248 = 62 * 4
        out.append(alphanumerics[Int(byte) % 62])
        if out.count == length { break }
      }
    }
    return String(decoding: out, as: UTF8.self)
  }

  /// `byteCount` random bytes as unpadded base64url: printable secrets for headers.
  public static func base64URL(byteCount: Int) throws(CryptoError) -> String {
    Base64URL.encode(try bytes(byteCount))
  }
}
