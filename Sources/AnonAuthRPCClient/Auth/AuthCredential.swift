import AnonAuthWire

/// A credential to sign in with or to link to the signed-in user, made by one of the
/// providers below, in the manner of FirebaseAuth's `AuthCredential`.
public struct AuthCredential: Sendable, Equatable {
  /// "password", "google.com", "facebook.com" or "oidc.<name>".
  public let provider: String
  let email: String
  let password: String
  let idToken: String
  let accessToken: String
  let nonce: String

  init(
    provider: String, email: String = "", password: String = "", idToken: String = "",
    accessToken: String = "",
    nonce: String = ""
  ) {
    self.provider = provider
    self.email = email
    self.password = password
    self.idToken = idToken
    self.accessToken = accessToken
    self.nonce = nonce
  }

  /// The wire form.
  var wire: Credential {
    Credential(
      providerId: provider, email: email, password: password, idToken: idToken, accessToken: accessToken,
      nonce: nonce)
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

/// Any OpenID Connect provider configured on the project as `oidc.<name>` (and Google).
public enum OAuthProvider {
  /// - Parameters:
  ///   - providerID: "oidc.<name>" as configured on the project, or "google.com".
  ///   - idToken: the provider's ID token.
  ///   - nonce: when given, the token's `nonce` must equal it (or its SHA-256 in hex).
  public static func credential(providerID: String, idToken: String, nonce: String? = nil) -> AuthCredential {
    AuthCredential(provider: providerID, idToken: idToken, nonce: nonce ?? "")
  }
}
