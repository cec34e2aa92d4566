import AnonAuthCrypto
import AnonAuthWire

extension FirebaseAPI {
  /// Identity Toolkit v1's client calls, `POST /v1/accounts:<method>` (also under
  /// `/identitytoolkit.googleapis.com`), each onto native AccountService methods.
  public static let accountEndpoints: [Endpoint] = [
    Endpoint("accounts:signUp", path: "/v1/accounts:signUp", handle: signUp),
    Endpoint(
      "accounts:signInWithPassword", path: "/v1/accounts:signInWithPassword", handle: signInWithPassword),
    Endpoint("accounts:signInWithIdp", path: "/v1/accounts:signInWithIdp", handle: signInWithIdp),
    Endpoint("accounts:lookup", path: "/v1/accounts:lookup", handle: lookup),
    Endpoint("accounts:update", path: "/v1/accounts:update", handle: update),
    Endpoint("accounts:delete", path: "/v1/accounts:delete", handle: delete),
  ]

  /// Anonymous without `email`; email and password with it; and with an `idToken` too,
  /// linking email and password to that account (how Firebase's SDKs link), whose uid
  /// stays.
  public static func signUp(_ call: Call) async throws(FirebaseError) -> JSONValue {
    let kind = "identitytoolkit#SignupNewUserResponse"
    let email = try call.string("email") ?? ""
    let password = try call.string("password") ?? ""
    if let idToken = try call.string("idToken"), !idToken.isEmpty {
      var request = LinkWithCredentialRequest()
      request.idToken = idToken
      request.credential = try passwordCredential(email: email, password: password)
      return .object(
        signedIn(try await call.native(AccountServiceMethods.linkWithCredential, request), kind: kind))
    }
    var request = SignUpRequest()
    if email.isEmpty && password.isEmpty {
      request.kind = .anonymous(AnonymousSignUp())
    } else {
      let credential = try passwordCredential(email: email, password: password)
      var signUp = EmailPasswordSignUp()
      signUp.email = credential.email
      signUp.password = credential.password
      signUp.displayName = try call.string("displayName") ?? ""
      request.kind = .emailPassword(signUp)
    }
    return .object(signedIn(try await call.native(AccountServiceMethods.signUp, request), kind: kind))
  }

  /// Firebase's answers for a missing email or password.
  static func passwordCredential(email: String, password: String) throws(FirebaseError) -> Credential {
    guard !email.isEmpty else { throw FirebaseError(status: 400, message: "MISSING_EMAIL") }
    guard !password.isEmpty else { throw FirebaseError(status: 400, message: "MISSING_PASSWORD") }
    var credential = Credential()
    credential.providerId = "password"
    credential.email = email
    credential.password = password
    return credential
  }

  public static func signInWithPassword(_ call: Call) async throws(FirebaseError) -> JSONValue {
    let credential = try passwordCredential(
      email: try call.string("email") ?? "", password: try call.string("password") ?? "")
    var request = SignInWithPasswordRequest()
    request.email = credential.email
    request.password = credential.password
    var out = signedIn(
      try await call.native(AccountServiceMethods.signInWithPassword, request),
      kind: "identitytoolkit#VerifyPasswordResponse")
    out["registered"] = true
    return .object(out)
  }

  /// The name FirebaseAuth sends for Sign in with Apple (from
  /// `ASAuthorizationAppleIDCredential.fullName`): `postBody`'s `user` field, JSON
  /// `{"name":{"firstName":…,"lastName":…}}`, either name optional. The given name, a
  /// space and the family name; empty when there is none (or it is not that JSON).
  static func appleFullName(_ user: String?) -> String {
    guard let user, let name = JSONValue(jsonBytes: Array(user.utf8))?.objectValue?["name"]?.objectValue
    else {
      return ""
    }
    let parts = [name["firstName"]?.stringValue, name["lastName"]?.stringValue]
      .compactMap { $0?.split(whereSeparator: \.isWhitespace).joined(separator: " ") }
      .filter { !$0.isEmpty }
    return parts.joined(separator: " ")
  }

  /// `postBody` is a form: `providerId`, and `id_token` (google.com, apple.com, oidc.*) or
  /// `access_token` (facebook.com), optionally `nonce` (the raw nonce) and, for apple.com,
  /// `user` (the name, `appleFullName`). With `idToken`, links to that
  /// account; a provider identity that belongs to another account is answered 200 with
  /// `errorMessage: FEDERATED_USER_ID_ALREADY_LINKED` and the credential, as Firebase
  /// does, so the app can sign in with it instead.
  public static func signInWithIdp(_ call: Call) async throws(FirebaseError) -> JSONValue {
    let kind = "identitytoolkit#VerifyAssertionResponse"
    let form = FormDecoding.fields(try call.string("postBody") ?? "")
    var credential = Credential()
    let providerField = try call.string("providerId")
    credential.providerId = form["providerId"] ?? providerField ?? ""
    credential.idToken = form["id_token"] ?? ""
    credential.accessToken = form["access_token"] ?? ""
    credential.nonce = form["nonce"] ?? ""
    credential.displayName = Self.appleFullName(form["user"])
    guard !credential.providerId.isEmpty else {
      throw FirebaseError(status: 400, message: "INVALID_IDP_RESPONSE : postBody names no providerId")
    }
    guard !credential.idToken.isEmpty || !credential.accessToken.isEmpty else {
      throw FirebaseError(
        status: 400, message: "INVALID_IDP_RESPONSE : postBody has no id_token or access_token")
    }
    var idpCredential: [String: JSONValue] = ["providerId": .string(credential.providerId)]
    if !credential.idToken.isEmpty { idpCredential["oauthIdToken"] = .string(credential.idToken) }
    if !credential.accessToken.isEmpty { idpCredential["oauthAccessToken"] = .string(credential.accessToken) }
    let response: AuthResponse
    if let idToken = try call.string("idToken"), !idToken.isEmpty {
      var request = LinkWithCredentialRequest()
      request.idToken = idToken
      request.credential = credential
      do throws(FirebaseError) {
        response = try await call.native(AccountServiceMethods.linkWithCredential, request)
      } catch  where error.rpcError?.reason == Reason.credentialAlreadyInUse.name {
        var out = idpCredential
        out["kind"] = .string(kind)
        out["errorMessage"] = "FEDERATED_USER_ID_ALREADY_LINKED"
        if let email = error.rpcError?.details["email"], !email.isEmpty { out["email"] = .string(email) }
        return .object(out)
      }
    } else {
      var request = SignInWithIdpRequest()
      request.credential = credential
      response = try await call.native(AccountServiceMethods.signInWithIdp, request)
    }
    var out = signedIn(response, kind: kind).merging(idpCredential) { own, _ in own }
    out["isNewUser"] = .bool(response.isNewUser)
    if let account = response.account {
      out["emailVerified"] = .bool(account.emailVerified)
      if let identity = account.providers.first(where: { $0.providerId == credential.providerId }) {
        out["federatedId"] = .string(identity.rawId)
        if out["email"] == nil, !identity.email.isEmpty { out["email"] = .string(identity.email) }
      }
    }
    return .object(out)
  }

  /// The account of `idToken`, as `users` with exactly one user object.
  public static func lookup(_ call: Call) async throws(FirebaseError) -> JSONValue {
    var request = GetAccountInfoRequest()
    request.idToken = try call.required("MISSING_ID_TOKEN", "idToken")
    let account = try await call.native(AccountServiceMethods.getAccountInfo, request)
    return ["kind": "identitytoolkit#GetAccountInfoResponse", "users": [FirebaseUserJSON.user(account)]]
  }

  public static func delete(_ call: Call) async throws(FirebaseError) -> JSONValue {
    var request = DeleteAccountRequest()
    request.idToken = try call.required("MISSING_ID_TOKEN", "idToken")
    _ = try await call.native(AccountServiceMethods.deleteAccount, request)
    return ["kind": "identitytoolkit#DeleteAccountResponse"]
  }
}

extension FirebaseAPI {
  /// Identity Platform's `POST /v2/accounts:revokeToken` (what FirebaseAuth's
  /// `revokeToken(withAuthorizationCode:)` calls): `idToken`, `providerId` "apple.com",
  /// `tokenType` 3 (a string or a number) and `token`, the authorization code; answers an
  /// empty object.
  public static let revokeTokenEndpoint = Endpoint(
    "accounts:revokeToken", path: "/v2/accounts:revokeToken", handle: revokeToken)

  public static func revokeToken(_ call: Call) async throws(FirebaseError) -> JSONValue {
    var request = RevokeTokenRequest()
    request.idToken = try call.required("MISSING_ID_TOKEN", "idToken")
    request.providerId = try call.string("providerId") ?? ""
    request.token = try call.string("token") ?? ""
    switch call.body["tokenType"] {
    case .string(let text)?: request.tokenType = Int32(text) ?? 0
    case let number?: request.tokenType = number.int64Value.flatMap { Int32(exactly: $0) } ?? 0
    case nil: request.tokenType = 0
    }
    _ = try await call.native(AccountServiceMethods.revokeToken, request)
    return .object([:])
  }
}
