import COpenSSL

/// Comparisons whose timing does not depend on where secrets differ.
public enum ConstantTime {
  /// True when `a` and `b` hold the same bytes. Lengths are not secret (a hash or a token
  /// has a fixed, public length), so different lengths return false at once; equal lengths
  /// are compared with `CRYPTO_memcmp`, which reads every byte.
  public static func equals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    guard a.count == b.count else { return false }
    if a.isEmpty { return true }
    return CRYPTO_memcmp(a, b, a.count) == 0
  }
}
