import AnonAuthStore

/// The defaults docs/protocol.md §5.3 gives for settings stored as 0.
extension ProjectRecord {
  public static let defaultSignUpQuotaPerHour: Int64 = 100
  public static let defaultIDTokenTTLSeconds: Int64 = 3600
  public static let defaultPasswordMinLength: Int64 = 6

  public var effectiveSignUpQuotaPerHour: Int64 {
    signUpQuotaPerHour == 0 ? Self.defaultSignUpQuotaPerHour : signUpQuotaPerHour
  }

  public var effectiveIDTokenTTLSeconds: Int64 {
    idTokenTTLSeconds == 0 ? Self.defaultIDTokenTTLSeconds : idTokenTTLSeconds
  }

  public var effectivePasswordMinLength: Int64 {
    passwordMinLength == 0 ? Self.defaultPasswordMinLength : passwordMinLength
  }
}
