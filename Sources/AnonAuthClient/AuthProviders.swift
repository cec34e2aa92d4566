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
  ///   - idToken: the Google ID token; the server verifies it.
  ///   - accessToken: sent along when given, as Firebase's SDKs do.
  public static func credential(withIDToken idToken: String, accessToken: String) -> AuthCredential {
    AuthCredential(provider: id, idToken: idToken, accessToken: accessToken)
  }
}

/// Facebook credentials: the access token from Facebook Login, which the server checks
/// with Facebook.
public enum FacebookAuthProvider {
  /// Facebook's provider id.
  public static let id = "facebook.com"

  public static func credential(withAccessToken accessToken: String) -> AuthCredential {
    AuthCredential(provider: id, accessToken: accessToken)
  }
}

/// Any OpenID Connect provider configured on the project as `oidc.<name>` (and Google).
public enum OAuthProvider {
  /// - Parameters:
  ///   - providerID: "oidc.<name>" as configured on the project, or "google.com".
  ///   - idToken: the provider's ID token.
  ///   - rawNonce: when given, the token's `nonce` must match it.
  public static func credential(
    withProviderID providerID: String, idToken: String, rawNonce: String? = nil
  ) -> AuthCredential {
    AuthCredential(provider: providerID, idToken: idToken, nonce: rawNonce ?? "")
  }
}
