import CCrypt
import COpenSSL

/// bcrypt hashes (`$2a$`, `$2b$`, `$2y$`) checked with the system's libxcrypt, so that
/// accounts imported with `firebase auth:import --hash-algo=BCRYPT` keep their passwords.
/// A bcrypt hash carries its own salt and cost; the hash text names the algorithm, so it
/// is checked here before libxcrypt sees it: a hostile `$6$rounds=…$` or `$2b$31$` would
/// otherwise pick another algorithm or cost hours of CPU.
public enum Bcrypt {
  /// Costs accepted (log2 of the rounds): 4 is bcrypt's minimum; 15 takes about two
  /// seconds on one core, the most one sign-in may cost. Common hashes use 10 to 12.
  public static let costRange = 4...15
  /// `$2b$` + two cost digits + `$` + 22 characters of salt + 31 of hash.
  static let hashLength = 60
  /// bcrypt reads at most 72 bytes; inputs over `PasswordLimits.maximumBytes` are refused
  /// before they are copied.

  /// Whether `hash` is a bcrypt hash this type will check: the right prefix and length, a
  /// cost in `costRange`, and only bcrypt's base64 characters after it.
  public static func isWellFormed(_ hash: [UInt8]) -> Bool {
    guard hash.count == hashLength, hash[0] == UInt8(ascii: "$"), hash[1] == UInt8(ascii: "2"),
      [UInt8(ascii: "a"), UInt8(ascii: "b"), UInt8(ascii: "y")].contains(hash[2]),
      hash[3] == UInt8(ascii: "$"), hash[6] == UInt8(ascii: "$"),
      let tens = digit(hash[4]), let ones = digit(hash[5]), costRange.contains(tens * 10 + ones)
    else { return false }
    return hash[7...].allSatisfy(isBcryptBase64)
  }

  /// Whether `password` matches the bcrypt `hash` (the hash's text as bytes), compared in
  /// constant time. Malformed hashes, passwords holding a NUL byte (C strings would cut
  /// them short) and failures of libxcrypt never match.
  public static func verify(password: [UInt8], hash: [UInt8]) -> Bool {
    guard isWellFormed(hash), password.count <= PasswordLimits.maximumBytes, !password.contains(0) else {
      return false
    }
    guard let computed = crypt(phrase: password + [0], setting: hash + [0]) else { return false }
    return ConstantTime.equals(computed, hash)
  }

  /// `crypt_rn` with its work area on the heap (it is 32 KiB) and wiped afterwards, since
  /// it held the password.
  private static func crypt(phrase: [UInt8], setting: [UInt8]) -> [UInt8]? {
    let size = MemoryLayout<crypt_data>.size
    let data = UnsafeMutableRawPointer.allocate(
      byteCount: size, alignment: MemoryLayout<crypt_data>.alignment)
    data.initializeMemory(as: UInt8.self, repeating: 0, count: size)
    defer {
      OPENSSL_cleanse(data, size)
      data.deallocate()
    }
    return phrase.withUnsafeBufferPointer { phraseBytes in
      setting.withUnsafeBufferPointer { settingBytes in
        phraseBytes.withMemoryRebound(to: CChar.self) { phraseChars in
          settingBytes.withMemoryRebound(to: CChar.self) { settingChars -> [UInt8]? in
            guard let output = crypt_rn(phraseChars.baseAddress, settingChars.baseAddress, data, Int32(size))
            else { return nil }
            let length = strnlen(output, Int(CRYPT_OUTPUT_SIZE))
            return output.withMemoryRebound(to: UInt8.self, capacity: length) {
              Array(UnsafeBufferPointer(start: $0, count: length))
            }
          }
        }
      }
    }
  }

  private static func digit(_ byte: UInt8) -> Int? {
    (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) ? Int(byte - UInt8(ascii: "0")) : nil
  }

  private static func isBcryptBase64(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "."), UInt8(ascii: "/"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
      UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
      true
    default: false
    }
  }
}
