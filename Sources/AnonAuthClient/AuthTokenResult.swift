import Foundation

/// An ID token and what it says, as FirebaseAuth's `AuthTokenResult`. The claims are
/// read from the token as it is (the server signed it; the client does not verify it).
///
/// `@unchecked Sendable`: every property is an immutable `let`; `claims` holds only what
/// `JSONSerialization` makes (strings, numbers, booleans, `NSNull`, arrays and
/// dictionaries of them), which nothing mutates after the parse.
public final class AuthTokenResult: @unchecked Sendable {
  public let token: String
  public let expirationDate: Date
  /// When the user signed in (`auth_time`).
  public let authDate: Date
  public let issuedAtDate: Date
  /// "anonymous", "password", "google.com", "custom"... (`firebase.sign_in_provider`).
  public let signInProvider: String
  /// Empty: AnonAuth has no second factors.
  public let signInSecondFactor: String
  /// Every claim of the token, custom claims included.
  public let claims: [String: Any]

  init(token: String) throws(AuthError) {
    let parts = token.split(separator: ".", omittingEmptySubsequences: false)
    var payload = parts.count == 3 ? String(parts[1]) : ""
    payload = payload.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
    while payload.count % 4 != 0 { payload.append("=") }
    guard !payload.isEmpty, let data = Data(base64Encoded: payload),
      let claims = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any],
      let exp = (claims["exp"] as? NSNumber)?.doubleValue
    else {
      throw AuthError(.malformedJWT, message: "the ID token is not a JWT with a JSON payload")
    }
    let iat = (claims["iat"] as? NSNumber)?.doubleValue ?? exp
    let firebase = claims["firebase"] as? [String: Any] ?? [:]
    self.token = token
    self.claims = claims
    self.expirationDate = Date(timeIntervalSince1970: exp)
    self.issuedAtDate = Date(timeIntervalSince1970: iat)
    self.authDate = Date(timeIntervalSince1970: (claims["auth_time"] as? NSNumber)?.doubleValue ?? iat)
    self.signInProvider = firebase["sign_in_provider"] as? String ?? ""
    self.signInSecondFactor = firebase["sign_in_second_factor"] as? String ?? ""
  }
}
