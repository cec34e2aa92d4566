import AnonAuthCrypto
import AnonAuthStore
import AnonAuthWire

/// What a new password must be: at least the project's minimum length (in characters, as
/// Firebase counts it; default 6) and at most 4096 bytes of UTF-8, so that hashing, which
/// is costly on purpose, cannot be fed megabytes.
public enum PasswordPolicy {
  public static let maximumBytes = PasswordLimits.maximumBytes

  /// - Throws: `WEAK_PASSWORD` naming the rule.
  public static func check(_ password: String, project: ProjectRecord) throws(RPCError) {
    let minimum = project.effectivePasswordMinLength
    guard password.utf8.count <= maximumBytes else {
      throw RPCError(.weakPassword, "the password is longer than \(maximumBytes) bytes")
    }
    guard password.count >= minimum else {
      throw RPCError(.weakPassword, "the password must have at least \(minimum) characters")
    }
  }
}
