import AnonAuthCrypto
import AnonAuthWire

/// `import-firebase --check-password EMAIL`: the password of one account the operator
/// knows (read from stdin) checked here against that row's hash with the hash config
/// given, before anything is sent. A wrong signer key, salt separator, rounds or memory
/// cost otherwise imports without an error and only every sign-in fails.
enum ImportPasswordCheck {
  /// Nil when the password matches, else why not (the import must not go on).
  static func mismatch(
    email: String, password: String, accounts: [ImportedAccount], config: ImportHashConfig?, file: String
  ) -> String? {
    let wanted = email.lowercased()
    guard let row = accounts.first(where: { $0.email.lowercased() == wanted }) else {
      return "--check-password: no row of \(file) has the email \(email)"
    }
    if !row.anonauthPasswordHash.isEmpty {
      return PasswordHasher().verify(password, against: row.anonauthPasswordHash).matches
        ? nil : "--check-password: the password does not match \(email)'s hash (AnonAuth's own form)"
    }
    guard !row.passwordHash.isEmpty else {
      return "--check-password: \(email) has no password hash in \(file)"
    }
    guard let config else {
      return "--check-password: \(email)'s hash needs --hash-config FILE (the project's hash parameters)"
    }
    guard config.verify(password: password, salt: row.salt, hash: row.passwordHash) else {
      return "--check-password: the password does not match \(email)'s hash with this hash config: "
        + "check the signer key, salt separator, rounds and mem_cost (base64 as the console shows them), "
        + "or the password; nothing was imported"
    }
    return nil
  }
}
