import AnonAuthCrypto
import AnonAuthWire

extension FirebaseAPI {
  /// `accounts:update` with an `idToken`: `deleteProvider` unlinks each provider named
  /// (native `UnlinkProvider`). Answers Firebase's SetAccountInfoResponse.
  public static func update(_ call: Call) async throws(FirebaseError) -> JSONValue {
    let idToken = try call.required("MISSING_ID_TOKEN", "idToken")
    var account: AccountInfo?
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
    return setAccountInfoResponse(account ?? AccountInfo(), tokens: nil)
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
      out["refreshToken"] = .string(tokens.refreshToken)
      out["expiresIn"] = .string(String(tokens.expiresIn))
    }
    return .object(out)
  }
}
