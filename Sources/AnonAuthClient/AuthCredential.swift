/// A credential to sign in with or to link to the signed-in user, made by one of the
/// providers, as FirebaseAuth's `AuthCredential`.
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
    accessToken: String = "", nonce: String = ""
  ) {
    self.provider = provider
    self.email = email
    self.password = password
    self.idToken = idToken
    self.accessToken = accessToken
    self.nonce = nonce
  }

  /// The `postBody` of `accounts:signInWithIdp`: the provider's token as a form.
  var postBody: String {
    var fields = [("providerId", provider)]
    if !idToken.isEmpty { fields.append(("id_token", idToken)) }
    if !accessToken.isEmpty { fields.append(("access_token", accessToken)) }
    if !nonce.isEmpty { fields.append(("nonce", nonce)) }
    return FormEncoding.encode(fields)
  }
}
