import AnonAuthCrypto
import AnonAuthStore
import AnonAuthWire

/// Verifies a Firebase ID token as the Firebase Admin SDKs' `verifyIdToken` does: RS256
/// only, signed by the certificate of its header's `kid` among Google's published keys
/// for securetoken@system.gserviceaccount.com, issued by
/// `https://securetoken.google.com/<project>` for the audience `<project>`, with a uid
/// (`sub`) of 1 to 128 bytes without control characters, and `exp`, `iat` and `auth_time` in order with the
/// clock skew the OIDC verifier allows. Every failure is `INVALID_IDP_RESPONSE` with a
/// short message that never repeats the token.
struct FirebaseTokenVerifier {
  /// Google's x509 certificate map for the keys that sign Firebase ID tokens.
  static let defaultCertsURL =
    "https://www.googleapis.com/robot/v1/metadata/x509/securetoken@system.gserviceaccount.com"
  static let issuerPrefix = "https://securetoken.google.com/"
  /// Firebase uids are at most 128 characters; AnonAuth takes 128 bytes, what
  /// `ImportAccounts` takes.
  static let maximumUIDLength = ImportRow.maximumUIDBytes

  /// The Firebase project whose tokens are accepted.
  let firebaseProjectID: String
  let source: OIDCVerifier.KeySource
  let cache: JWKSCache

  /// The verifier of `project`'s exchange settings: inline certificates first, else the
  /// configured URL, else Google's.
  init(project: ProjectRecord, cache: JWKSCache) {
    firebaseProjectID = project.firebaseProjectID
    if !project.firebaseCertsJSON.isEmpty {
      source = .inline(project.firebaseCertsJSON)
    } else {
      source = .url(project.firebaseCertsURL.isEmpty ? Self.defaultCertsURL : project.firebaseCertsURL)
    }
    self.cache = cache
  }

  var issuer: String { Self.issuerPrefix + firebaseProjectID }

  func verify(idToken: String, nowSeconds now: Int64) async throws(RPCError) -> FirebaseIdentity {
    guard !idToken.isEmpty else { throw invalid("id_token is empty") }
    let token: DecodedJWT
    do {
      token = try JWT.decode(idToken)
    } catch {
      throw invalid("the Firebase ID token is malformed")
    }
    guard token.algorithm == "RS256" else { throw invalid("the Firebase ID token is not signed with RS256") }
    guard let kid = token.keyID, !kid.isEmpty else { throw invalid("the Firebase ID token has no kid") }
    // Claims first: they cost nothing, and a token of another project needs no key fetch.
    let identity = try checkClaims(token.claims, now: now)
    var keys = try await keySet(refresh: false).candidates(kid: kid, algorithm: "RS256")
    if keys.isEmpty, case .url = source {
      keys = try await keySet(refresh: true).candidates(kid: kid, algorithm: "RS256")
    }
    guard !keys.isEmpty else {
      throw invalid("the Firebase ID token's kid is not among Google's certificates")
    }
    let signed = keys.contains { key in
      if case .rsa(let rsa) = key { return token.verify(with: rsa) }
      return false
    }
    guard signed else { throw invalid("the Firebase ID token's signature is not valid") }
    return identity
  }

  private func keySet(refresh: Bool) async throws(RPCError) -> JWKSet {
    switch source {
    case .inline(let json): try cache.inline(json, format: .x509)
    case .url(let url): try await cache.keys(url: url, refresh: refresh, format: .x509)
    }
  }

  func checkClaims(_ claims: [String: JSONValue], now: Int64) throws(RPCError) -> FirebaseIdentity {
    guard claims["iss"]?.stringValue == issuer else {
      throw invalid("the Firebase ID token was issued for another Firebase project")
    }
    guard claims["aud"]?.stringValue == firebaseProjectID else {
      throw invalid("the Firebase ID token was issued for another Firebase project")
    }
    guard let sub = claims["sub"]?.stringValue, !sub.isEmpty else {
      throw invalid("the Firebase ID token has no subject")
    }
    // 128 bytes and no control characters: the uid becomes the account's, and
    // `ImportAccounts` takes no other (an exported account must import again).
    guard sub.utf8.count <= Self.maximumUIDLength, !ProviderText.hasControl(sub) else {
      throw invalid("the Firebase ID token's subject is over 128 bytes or has control characters")
    }
    if let userID = claims["user_id"], userID.stringValue != sub {
      throw invalid("the Firebase ID token's user_id is not its subject")
    }
    guard let exp = claims["exp"]?.int64Value, let iat = claims["iat"]?.int64Value,
      let authTime = claims["auth_time"]?.int64Value
    else { throw invalid("the Firebase ID token lacks exp, iat or auth_time") }
    // Checked arithmetic: these are claims, and a bound near Int64's edge must not trap.
    let (earliest, underflow) = now.subtractingReportingOverflow(ClockSkew.providerTokenSeconds)
    let (latest, overflow) = now.addingReportingOverflow(ClockSkew.providerTokenSeconds)
    guard !underflow, !overflow else { throw invalid("the clock is out of range") }
    guard exp > earliest else { throw invalid("the Firebase ID token has expired") }
    guard iat <= latest else { throw invalid("the Firebase ID token was issued in the future") }
    guard authTime <= latest else { throw invalid("the Firebase ID token's auth_time is in the future") }

    let firebase = claims["firebase"]?.objectValue ?? [:]
    let provider = firebase["sign_in_provider"]?.stringValue ?? ""
    guard FirebaseIdentity.isPlausibleProvider(provider) else {
      throw invalid("the Firebase ID token has no usable firebase.sign_in_provider")
    }
    let picture = claims["picture"]?.stringValue ?? ""
    for (name, value) in [
      ("email", claims["email"]?.stringValue), ("name", claims["name"]?.stringValue), ("picture", picture),
    ]
    where value.map(ProviderText.hasControl) == true {
      throw invalid("the Firebase ID token's \(name) has control characters")
    }
    let email = claims["email"]?.stringValue.flatMap(EmailAddress.normalize) ?? ""
    return FirebaseIdentity(
      uid: sub, signInProvider: provider, email: email,
      emailVerified: !email.isEmpty && claims["email_verified"]?.boolValue == true,
      displayName: ProviderText.clippedName(claims["name"]?.stringValue ?? ""),
      photoURL: picture.utf8.count <= 2048 ? picture : "", authTime: authTime)
  }

  private func invalid(_ why: String) -> RPCError { RPCError(.invalidIdpResponse, why) }
}

/// Who a verified Firebase ID token says the user is.
struct FirebaseIdentity: Sendable, Equatable {
  /// `sub`: the Firebase uid, which the AnonAuth account keeps.
  let uid: String
  /// `firebase.sign_in_provider`: "anonymous", "password", "google.com", "phone",
  /// "custom", ...
  let signInProvider: String
  /// Normalised; empty when the token has none (or an unusable one).
  let email: String
  let emailVerified: Bool
  let displayName: String
  let photoURL: String
  /// The token's `auth_time`, seconds.
  let authTime: Int64

  var isAnonymous: Bool { signInProvider == "anonymous" }

  /// Provider ids as Firebase writes them: 1 to 64 of `[A-Za-z0-9._-]` (they end up in
  /// AnonAuth's tokens, refresh-token families and metrics, so nothing else is taken).
  static func isPlausibleProvider(_ provider: String) -> Bool {
    (1...64).contains(provider.utf8.count)
      && provider.utf8.allSatisfy { byte in
        (0x61...0x7A).contains(byte) || (0x41...0x5A).contains(byte) || (0x30...0x39).contains(byte)
          || byte == 0x2E || byte == 0x2D || byte == 0x5F
      }
  }
}
