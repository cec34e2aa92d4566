import Foundation

/// FirebaseAuth's `AuthProviderID`: the providers' ids, typed.
public struct AuthProviderID: Equatable, Hashable, Sendable {
  public let rawValue: String

  private init(rawValue: String) { self.rawValue = rawValue }

  public static var apple: Self { Self(rawValue: "apple.com") }
  public static var email: Self { Self(rawValue: "password") }
  public static var facebook: Self { Self(rawValue: "facebook.com") }
  public static var gameCenter: Self { Self(rawValue: "gc.apple.com") }
  public static var gitHub: Self { Self(rawValue: "github.com") }
  public static var google: Self { Self(rawValue: "google.com") }
  public static var phone: Self { Self(rawValue: "phone") }
  /// "oidc.<name>" as configured on the project.
  public static func custom(_ value: String) -> Self { Self(rawValue: value) }
}

/// Email and password credentials.
public enum EmailAuthProvider {
  /// The provider id of email and password credentials.
  public static let id = "password"

  /// A credential that links (or signs in with) this email and password.
  public static func credential(withEmail email: String, password: String) -> AuthCredential {
    AuthCredential(provider: id, email: email, password: password)
  }

  /// A credential that signs in with (or links to the signed-in user) the email of a
  /// sign-in link (`Auth.sendSignInLink(toEmail:actionCodeSettings:)`).
  public static func credential(withEmail email: String, link: String) -> AuthCredential {
    AuthCredential(provider: id, email: email, link: link)
  }
}

/// Google credentials: the ID token from Google Sign-In.
public enum GoogleAuthProvider {
  /// Google's provider id.
  public static let id = "google.com"

  /// - Parameters:
  ///   - idToken: the Google ID token; the server verifies it.
  ///   - accessToken: sent along, as Firebase's SDKs do.
  public static func credential(withIDToken idToken: String, accessToken: String) -> AuthCredential {
    OAuthCredential(provider: id, idToken: idToken, accessToken: accessToken)
  }
}

/// Facebook credentials: the access token from Facebook Login, which the server checks
/// with Facebook.
public enum FacebookAuthProvider {
  /// Facebook's provider id.
  public static let id = "facebook.com"

  public static func credential(withAccessToken accessToken: String) -> AuthCredential {
    OAuthCredential(provider: id, accessToken: accessToken)
  }
}

/// Any OpenID Connect provider configured on the project as `oidc.<name>`, Google, and
/// Sign in with Apple (`apple.com`).
public enum OAuthProvider {
  /// FirebaseAuth's generic OAuth id.
  public static let id = "OAuth"

  /// - Parameters:
  ///   - providerID: `.custom("oidc.<name>")` as configured on the project, or `.google`.
  ///   - idToken: the provider's ID token.
  ///   - rawNonce: the token's `nonce` must be its SHA-256 in hex (Google: or itself).
  ///   - accessToken: sent along when given.
  public static func credential(
    providerID: AuthProviderID, idToken: String, rawNonce: String, accessToken: String? = nil
  ) -> OAuthCredential {
    OAuthCredential(
      provider: providerID.rawValue, idToken: idToken, accessToken: accessToken ?? "", nonce: rawNonce)
  }

  /// A credential without a nonce.
  public static func credential(
    providerID: AuthProviderID, idToken: String, accessToken: String? = nil
  ) -> OAuthCredential {
    OAuthCredential(provider: providerID.rawValue, idToken: idToken, accessToken: accessToken ?? "")
  }

  /// A credential of an access token alone (the server checks it with the provider).
  public static func credential(providerID: AuthProviderID, accessToken: String) -> OAuthCredential {
    OAuthCredential(provider: providerID.rawValue, accessToken: accessToken)
  }

  /// A Sign in with Apple credential. Apple gives the name only on the first
  /// authorization and never in its token: it travels as FirebaseAuth sends it, and an
  /// account without a display name takes it.
  /// - Parameter rawNonce: the nonce whose SHA-256 (hex) the app gave Apple's request.
  public static func appleCredential(
    withIDToken idToken: String, rawNonce: String?, fullName: PersonNameComponents?
  ) -> OAuthCredential {
    OAuthCredential(
      provider: AuthProviderID.apple.rawValue, idToken: idToken, nonce: rawNonce ?? "", fullName: fullName)
  }

  /// This library's earlier spelling, kept for code written against it.
  public static func credential(
    withProviderID providerID: String, idToken: String, rawNonce: String? = nil
  ) -> AuthCredential {
    OAuthCredential(provider: providerID, idToken: idToken, nonce: rawNonce ?? "")
  }
}
