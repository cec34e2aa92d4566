import AnonAuthCrypto
import AnonAuthWire

/// The four email actions, by Firebase's `requestType` names, with what each code is good
/// for and for how long (Firebase's lifetimes: a password reset 1 hour, a sign-in link 6
/// hours, a verification or an email change 3 days).
public enum OobKind: String, Sendable, CaseIterable {
  case passwordReset = "PASSWORD_RESET"
  case verifyEmail = "VERIFY_EMAIL"
  case verifyAndChangeEmail = "VERIFY_AND_CHANGE_EMAIL"
  case emailSignIn = "EMAIL_SIGNIN"

  /// How long a code of this kind works after it was made.
  public var lifetimeMs: Int64 {
    switch self {
    case .passwordReset: 3_600_000
    case .emailSignIn: 6 * 3_600_000
    case .verifyEmail, .verifyAndChangeEmail: 3 * 86_400_000
    }
  }

  /// The link's `mode` parameter, as Firebase's action links name it.
  public var mode: String {
    switch self {
    case .passwordReset: "resetPassword"
    case .verifyEmail: "verifyEmail"
    case .verifyAndChangeEmail: "verifyAndChangeEmail"
    case .emailSignIn: "signIn"
    }
  }
}

/// Email action codes: 32 random bytes (base64url, 43 characters) from the CSPRNG, kept
/// in the store only as their SHA-256, so a copy of the store cannot use them.
public enum OobCodeFactory {
  /// A new code and its hash.
  public static func make() throws(RPCError) -> (code: String, hash: [UInt8]) {
    let code: String
    do {
      code = try SecureRandom.base64URL(byteCount: 32)
    } catch {
      throw RPCError(.internalError, "random generator failed")
    }
    return (code, hash(code))
  }

  /// What the store keeps of `code`.
  public static func hash(_ code: String) -> [UInt8] {
    SHA256.hash(Array(code.utf8))
  }

  /// A code as a request carries it: at most 128 bytes of base64url, else never valid
  /// (refused before any hashing or store read).
  public static func plausible(_ code: String) -> Bool {
    !code.isEmpty && code.utf8.count <= 128
      && code.utf8.allSatisfy { byte in
        (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
          || byte == 0x2D || byte == 0x5F
      }
  }
}
