/// The longest password any hasher here takes, declared once for the new-password policy,
/// bcrypt and the imported-hash verifiers: hashing is costly on purpose, so it must never
/// be fed megabytes, and a password a user could set must be one every path can check.
public enum PasswordLimits {
  /// 4 KiB of UTF-8.
  public static let maximumBytes = 4096
}
