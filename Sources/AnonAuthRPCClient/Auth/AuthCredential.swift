import AnonAuthWire

/// A credential to sign in with or to link to the signed-in user, made by one of the
/// providers below, in the manner of FirebaseAuth's `AuthCredential`.
public struct AuthCredential: Sendable, Equatable {
  /// "password", "google.com", "apple.com", "facebook.com" or "oidc.<name>".
  public let provider: String
  let email: String
  let password: String
  let idToken: String
  let accessToken: String
  let nonce: String
  /// apple.com: the user's name as Apple gave it to the app.
  let displayName: String

  init(
    provider: String, email: String = "", password: String = "", idToken: String = "",
    accessToken: String = "",
    nonce: String = "", displayName: String = ""
  ) {
    self.provider = provider
    self.email = email
    self.password = password
    self.idToken = idToken
    self.accessToken = accessToken
    self.nonce = nonce
    self.displayName = displayName
  }

  /// The wire form.
  var wire: Credential {
    Credential(
      providerId: provider, email: email, password: password, idToken: idToken, accessToken: accessToken,
      nonce: nonce, displayName: displayName)
  }
}

/// Email and password credentials.
public enum EmailAuthProvider {
  /// The provider id of email and password credentials.
  public static let id = "password"

  /// A credential that links (or signs in with) this email and password.
  public static func credential(withEmail email: String, password: String) -> AuthCredential {
    AuthCredential(provider: id, email: email, password: password)
  }
}

/// Google credentials: the ID token from Google Sign-In.
public enum GoogleAuthProvider {
  /// Google's provider id.
  public static let id = "google.com"

  /// - Parameters:
  ///   - idToken: the Google ID token; AnonAuth verifies it (signature, issuer, audience,
  ///     expiry).
  ///   - accessToken: Google's access token, sent along as FirebaseAuth and
  ///     `AnonAuthClient` send it (the server verifies the ID token; it does not need
  ///     the access token today).
  public static func credential(withIDToken idToken: String, accessToken: String) -> AuthCredential {
    AuthCredential(provider: id, idToken: idToken, accessToken: accessToken)
  }
}

/// Facebook credentials: the access token from Facebook Login, checked by AnonAuth with
/// the Graph API.
public enum FacebookAuthProvider {
  /// Facebook's provider id.
  public static let id = "facebook.com"

  /// A credential of the Facebook Login access token; AnonAuth checks it with the Graph API.
  public static func credential(withAccessToken accessToken: String) -> AuthCredential {
    AuthCredential(provider: id, accessToken: accessToken)
  }
}

/// Any OpenID Connect provider configured on the project as `oidc.<name>` (and Google,
/// and Sign in with Apple).
public enum OAuthProvider {
  /// - Parameters:
  ///   - providerID: "oidc.<name>" as configured on the project, or "google.com".
  ///   - idToken: the provider's ID token.
  ///   - nonce: the raw nonce: needed when the token has a `nonce` claim, which must be
  ///     its SHA-256 in hex (google.com: or the value itself).
  public static func credential(providerID: String, idToken: String, nonce: String? = nil) -> AuthCredential {
    AuthCredential(provider: providerID, idToken: idToken, nonce: nonce ?? "")
  }

  /// A Sign in with Apple credential, as FirebaseAuth's
  /// `appleCredential(withIDToken:rawNonce:fullName:)`.
  /// - Parameters:
  ///   - idToken: Apple's identity token.
  ///   - rawNonce: the nonce whose SHA-256 (hex) the app put in Apple's request.
  ///   - fullName: the name Apple gave the app (on the first authorization only); an
  ///     account without a display name takes it.
  public static func appleCredential(withIDToken idToken: String, rawNonce: String?, fullName: String? = nil)
    -> AuthCredential
  {
    AuthCredential(
      provider: "apple.com", idToken: idToken, nonce: rawNonce ?? "", displayName: fullName ?? "")
  }
}
