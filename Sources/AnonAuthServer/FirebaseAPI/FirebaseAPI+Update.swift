import AnonAuthCrypto
import AnonAuthWire

extension FirebaseAPI {
  /// `accounts:update` with an `idToken`: `email`, `password`, `displayName` (and
  /// `deleteAttribute: ["DISPLAY_NAME"]`) through native `UpdateAccount`, then
  /// `deleteProvider` unlinks each provider named (native `UnlinkProvider`) with the
  /// newest ID token. Answers Firebase's SetAccountInfoResponse, with the new tokens when
  /// the change issued them.
  public static func update(_ call: Call) async throws(FirebaseError) -> JSONValue {
    if let code = try call.string("oobCode"), !code.isEmpty {
      return try await applyActionCode(call, code: code)
    }
    var idToken = try call.required("MISSING_ID_TOKEN", "idToken")
    var change = UpdateOwnAccountRequest()
    change.idToken = idToken
    if let email = try call.string("email") {
      change.updateMask.append("email")
      change.email = email
    }
    if let password = try call.string("password") {
      change.updateMask.append("password")
      change.password = password
    }
    if let name = try call.string("displayName") {
      change.updateMask.append("display_name")
      change.displayName = name
    }
    if try call.strings("deleteAttribute").contains("DISPLAY_NAME") {
      change.updateMask.append("display_name")
      change.displayName = ""
    }
    var account: AccountInfo?
    var tokens: AuthResponse?
    if !change.updateMask.isEmpty {
      let response = try await call.native(AccountServiceMethods.updateAccount, change)
      account = response.account
      tokens = response
      idToken = response.idToken
    }
    for provider in try call.strings("deleteProvider") {
      var request = UnlinkProviderRequest()
      request.idToken = idToken
      request.providerId = provider
      account = try await call.native(AccountServiceMethods.unlinkProvider, request)
    }
    if account == nil {
      var request = GetAccountInfoRequest()
      request.idToken = idToken
      account = try await call.native(AccountServiceMethods.getAccountInfo, request)
    }
    return setAccountInfoResponse(account ?? AccountInfo(), tokens: tokens)
  }

  /// Firebase's answer to `accounts:update`: the account's profile and providers, and new
  /// tokens when the call issued them.
  static func setAccountInfoResponse(_ account: AccountInfo, tokens: AuthResponse?) -> JSONValue {
    var out: [String: JSONValue] = [
      "kind": "identitytoolkit#SetAccountInfoResponse", "localId": .string(account.localId),
      "providerUserInfo": .array(account.providers.map(FirebaseUserJSON.providerUserInfo)),
    ]
    if !account.email.isEmpty {
      out["email"] = .string(account.email)
      out["emailVerified"] = .bool(account.emailVerified)
    }
    if !account.displayName.isEmpty { out["displayName"] = .string(account.displayName) }
    if account.providers.contains(where: { $0.providerId == "password" }) {
      out["passwordHash"] = .string(FirebaseUserJSON.passwordHashPlaceholder)
    }
    if let tokens {
      out["idToken"] = .string(tokens.idToken)
      out["expiresIn"] = .string(String(tokens.expiresIn))
      // Empty when the change started no new session (the display name alone): the
      // client keeps the refresh token it has.
      if !tokens.refreshToken.isEmpty { out["refreshToken"] = .string(tokens.refreshToken) }
    }
    return .object(out)
  }
}
