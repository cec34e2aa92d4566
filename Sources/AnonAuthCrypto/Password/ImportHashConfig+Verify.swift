extension ImportHashConfig {
  /// Bounds on what `verify` will hash, so hostile sizes cost nothing: passwords up to
  /// 4 KiB (`PasswordLimits`), salts up to 1 KiB (Firebase's published example has 10 bytes), hashes from 16
  /// bytes (less could match by chance) to 1 KiB (a SCRYPT hash is as long as the key).
  public static let maxSaltBytes = 1024
  public static let hashBytesRange = 16...1024

  /// Whether `password` matches an imported `hash` made with this config and the
  /// account's `salt` (both as `firebase auth:export` gives them, base64-decoded),
  /// compared in constant time. Slow on purpose for SCRYPT, PBKDF2 and BCRYPT: run it on
  /// the CPU pool.
  ///
  /// - SCRYPT: Firebase's modified scrypt (`FirebaseScrypt`).
  /// - PBKDF2_SHA256: PBKDF2-HMAC-SHA256(password, salt, rounds), as long as the hash
  ///   (Firebase's own tests store 64 bytes; 16...64 accepted).
  /// - HMAC_SHA256: HMAC-SHA256(key, password + salt), or salt + password with
  ///   `saltFirst`; a 32-byte hash.
  /// - BCRYPT: `hash` is the UTF-8 of the `$2b$…` text; `salt` is ignored.
  ///
  /// Empty or oversized passwords, salts and hashes never match, and nothing here traps.
  public func verify(password: String, salt: [UInt8], hash: [UInt8]) -> Bool {
    let password = Array(password.utf8)
    guard !password.isEmpty, password.count <= PasswordLimits.maximumBytes,
      Self.hashBytesRange.contains(hash.count)
    else { return false }
    if algorithm == .bcrypt { return Bcrypt.verify(password: password, hash: hash) }
    guard !salt.isEmpty, salt.count <= Self.maxSaltBytes else { return false }
    switch algorithm {
    case .scrypt:
      guard
        let scrypt = try? FirebaseScrypt(
          signerKey: signerKey, saltSeparator: saltSeparator, rounds: rounds, memCost: memCost)
      else { return false }
      return scrypt.verify(password: password, salt: salt, hash: hash)
    case .pbkdf2SHA256:
      guard hash.count <= 64,
        let derived = try? PBKDF2SHA256.derive(
          password: password, salt: salt, iterations: rounds, length: hash.count)
      else { return false }
      return ConstantTime.equals(derived, hash)
    case .hmacSHA256:
      guard hash.count == 32 else { return false }
      let message = saltFirst ? salt + password : password + salt
      return ConstantTime.equals(HMACSHA256.authenticationCode(key: signerKey, message: message), hash)
    case .bcrypt:
      return false
    }
  }
}
