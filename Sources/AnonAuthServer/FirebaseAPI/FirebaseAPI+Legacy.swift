import AnonAuthCrypto
import AnonAuthWire

extension FirebaseAPI {
  /// The legacy Identity Toolkit v3 paths Firebase's Apple SDK (FirebaseAuth 12.x) calls
  /// after `useEmulator(withHost:port:)`, and only those:
  /// `POST /www.googleapis.com/identitytoolkit/v3/relyingparty/<method>?key=` (also
  /// without the host segment). Each is the v1 endpoint of the same meaning, with the
  /// same code: the bodies and answers share Firebase's field names, and the v1 answers
  /// already give what the SDK's decoders need (docs/http-admin-api.md lists it).
  public static let legacyEndpoints: [Endpoint] = legacyMethods.flatMap { method, handle in
    legacyPrefixes.map { prefix in
      Endpoint(
        "relyingparty/\(method)", path: "\(prefix)/identitytoolkit/v3/relyingparty/\(method)", handle: handle)
    }
  }

  /// The two layouts: with the host as the first segment (the SDK's emulator mode) and
  /// without it.
  static let legacyPrefixes = ["/www.googleapis.com", ""]

  /// Each legacy method and the v1 call it is.
  static let legacyMethods: [(String, @Sendable (Call) async throws(FirebaseError) -> JSONValue)] = [
    ("signupNewUser", signUp),
    ("getAccountInfo", lookup),
    ("verifyPassword", signInWithPassword),
    ("verifyAssertion", signInWithIdp),
    ("setAccountInfo", update),
    ("deleteAccount", delete),
    ("getOobConfirmationCode", sendOobCode),
    ("resetPassword", resetPassword),
    ("emailLinkSignin", signInWithEmailLink),
  ]
}
