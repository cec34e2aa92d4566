import COpenSSL

/// scrypt (RFC 7914) through OpenSSL's `EVP_PBE_scrypt`: the password hash of the
/// design card. It costs tens of milliseconds by design, so callers run it on the CPU
/// pool, never on Swift's cooperative pool.
public enum Scrypt {
  /// OpenSSL refuses to allocate more than this (its default is 32 MiB, below what some
  /// valid parameters need); `ScryptParameters` keeps the real use far lower.
  static let maxmem: UInt64 = 256 * 1024 * 1024

  /// The derived key of `password` and `salt`.
  /// - Parameters:
  ///   - n: the cost, a power of two greater than 1; `r` and `p` at least 1.
  ///   - length: bytes of output, 1...1024.
  /// - Throws: `CryptoError` when OpenSSL refuses the parameters or fails.
  public static func derive(
    password: [UInt8], salt: [UInt8], n: UInt64, r: UInt64, p: UInt64, length: Int
  ) throws(CryptoError) -> [UInt8] {
    guard (1...1024).contains(length), n > 1, n & (n - 1) == 0, r >= 1, p >= 1 else {
      throw CryptoError("scrypt parameters")
    }
    var key = [UInt8](repeating: 0, count: length)
    ERR_clear_error()
    let ok = password.withUnsafeBufferPointer { pass in
      pass.withMemoryRebound(to: CChar.self) { chars in
        EVP_PBE_scrypt(chars.baseAddress, chars.count, salt, salt.count, n, r, p, maxmem, &key, key.count)
      }
    }
    guard ok == 1 else { throw CryptoError("EVP_PBE_scrypt") }
    return key
  }

  /// The derived key with bounded `parameters`.
  public static func derive(
    password: [UInt8], salt: [UInt8], parameters: ScryptParameters, length: Int
  ) throws(CryptoError) -> [UInt8] {
    try derive(
      password: password, salt: salt, n: parameters.n, r: UInt64(parameters.r), p: UInt64(parameters.p),
      length: length)
  }
}
