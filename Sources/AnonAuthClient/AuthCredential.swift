import Foundation

/// A credential to sign in with or to link to the signed-in user, made by one of the
/// providers, as FirebaseAuth's `AuthCredential` (a class, so that `OAuthCredential` is
/// one). The same model travels in `AuthDataResult.credential` and in the error after
/// `.credentialAlreadyInUse`.
///
/// `@unchecked Sendable` is safe: every stored property is an immutable `let` of a
/// Sendable type; the class is only open to this module's `OAuthCredential`.
public class AuthCredential: @unchecked Sendable, Equatable {
  /// "password", "google.com", "facebook.com", "apple.com" or "oidc.<name>".
  public let provider: String
  let email: String
  let password: String
  let idTokenValue: String
  let accessTokenValue: String
  let nonce: String
  /// Sign in with Apple: the name Apple gave the app (`ASAuthorizationAppleIDCredential`
  /// `.fullName`), which the server keeps as the display name of an account without one.
  let fullName: PersonNameComponents?
  /// An email sign-in link (`EmailAuthProvider.credential(withEmail:link:)`).
  let link: String

  init(
    provider: String, email: String = "", password: String = "", idToken: String = "",
    accessToken: String = "", nonce: String = "", fullName: PersonNameComponents? = nil, link: String = ""
  ) {
    self.provider = provider
    self.email = email
    self.password = password
    self.idTokenValue = idToken
    self.accessTokenValue = accessToken
    self.nonce = nonce
    self.fullName = fullName
    self.link = link
  }

  /// The `postBody` of `accounts:signInWithIdp`: the provider's tokens as a form, the
  /// access token included whenever there is one (Google's too).
  var postBody: String {
    var fields = [("providerId", provider)]
    if !idTokenValue.isEmpty { fields.append(("id_token", idTokenValue)) }
    if !accessTokenValue.isEmpty { fields.append(("access_token", accessTokenValue)) }
    if !nonce.isEmpty { fields.append(("nonce", nonce)) }
    if let user = userJSON { fields.append(("user", user)) }
    return FormEncoding.encode(fields)
  }

  /// FirebaseAuth's `user` field of `postBody` for Apple's name:
  /// `{"name":{"firstName":…,"lastName":…}}` with the parts the name has; nil without
  /// either.
  var userJSON: String? {
    var name: [String: String] = [:]
    if let given = fullName?.givenName { name["firstName"] = given }
    if let family = fullName?.familyName { name["lastName"] = family }
    guard !name.isEmpty else { return nil }
    let encoder = JSONEncoder()
    encoder.outputFormatting = .sortedKeys
    guard let data = try? encoder.encode(["name": name]) else { return nil }
    return String(decoding: data, as: UTF8.self)
  }

  public static func == (lhs: AuthCredential, rhs: AuthCredential) -> Bool {
    lhs.provider == rhs.provider && lhs.email == rhs.email && lhs.password == rhs.password
      && lhs.idTokenValue == rhs.idTokenValue && lhs.accessTokenValue == rhs.accessTokenValue
      && lhs.nonce == rhs.nonce && lhs.fullName == rhs.fullName && lhs.link == rhs.link
  }
}

/// A credential of an OAuth or OpenID Connect provider, as FirebaseAuth's
/// `OAuthCredential`: what `OAuthProvider` makes, and what a sign-in with a provider
/// returns in `AuthDataResult.credential`.
public final class OAuthCredential: AuthCredential, @unchecked Sendable {
  /// The provider's ID token, if any.
  public var idToken: String? { idTokenValue.isEmpty ? nil : idTokenValue }
  /// The provider's access token, if any.
  public var accessToken: String? { accessTokenValue.isEmpty ? nil : accessTokenValue }
  /// OAuth 1 secrets are not used by any provider AnonAuth verifies: always nil.
  public var secret: String? { nil }
}
