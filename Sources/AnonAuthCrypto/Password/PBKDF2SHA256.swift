import COpenSSL

/// PBKDF2 with HMAC-SHA256 (RFC 8018) through OpenSSL's `PKCS5_PBKDF2_HMAC`, so that
/// accounts imported with `firebase auth:import --hash-algo=PBKDF2_SHA256` keep their
/// passwords. AnonAuth's own hashes stay scrypt; this only checks hashes made elsewhere.
public enum PBKDF2SHA256 {
  /// The hard ceiling on iterations, whatever a caller asks: ten million HMACs are a few
  /// seconds of one core, the most one sign-in may cost. `ImportHashConfig` is stricter.
  public static let iterationsRange = 1...10_000_000
  /// Output lengths OpenSSL is asked for; longer keys are not a stronger hash.
  public static let lengthRange = 1...1024
  /// Bounds on the inputs, so that `Int32` conversions cannot trap.
  static let maxInputBytes = 1 << 20

  /// The derived key of `password` and `salt`.
  /// - Parameters:
  ///   - iterations: in `iterationsRange`.
  ///   - length: bytes of output, in `lengthRange`.
  /// - Throws: `CryptoError` for parameters or inputs out of range, or when OpenSSL fails.
  public static func derive(
    password: [UInt8], salt: [UInt8], iterations: Int, length: Int
  ) throws(CryptoError) -> [UInt8] {
    guard iterationsRange.contains(iterations), lengthRange.contains(length),
      password.count <= maxInputBytes, salt.count <= maxInputBytes
    else { throw CryptoError("PBKDF2-SHA256 parameters") }
    var key = [UInt8](repeating: 0, count: length)
    ERR_clear_error()
    let ok = password.withUnsafeBufferPointer { pass in
      pass.withMemoryRebound(to: CChar.self) { chars in
        PKCS5_PBKDF2_HMAC(
          chars.baseAddress, Int32(chars.count), salt, Int32(salt.count), Int32(iterations), EVP_sha256(),
          Int32(length), &key)
      }
    }
    guard ok == 1 else { throw CryptoError("PKCS5_PBKDF2_HMAC") }
    return key
  }
}
