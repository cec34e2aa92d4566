import AnonAuthCrypto
import AnonAuthWire

extension FirebaseAPI {
  /// The Secure Token API: `POST /v1/token` (also under `/securetoken.googleapis.com`).
  public static let tokenEndpoints: [Endpoint] = [
    Endpoint("token", path: "/v1/token", handle: token)
  ]

  /// `grant_type=refresh_token` as a form or JSON, with snake_case (the REST docs) or
  /// camelCase (Apple's SDK) keys; native `RefreshToken`. Answers in snake_case, with
  /// `access_token` the same ID token, as Firebase does.
  public static func token(_ call: Call) async throws(FirebaseError) -> JSONValue {
    let grantType = try call.string("grant_type", "grantType")
    guard let grantType, !grantType.isEmpty else {
      throw FirebaseError(status: 400, message: "MISSING_GRANT_TYPE")
    }
    guard grantType == "refresh_token" else {
      throw FirebaseError(status: 400, message: "INVALID_GRANT_TYPE")
    }
    var request = RefreshTokenRequest()
    request.refreshToken = try call.required("MISSING_REFRESH_TOKEN", "refresh_token", "refreshToken")
    let response = try await call.native(AccountServiceMethods.refreshToken, request)
    let expiresIn = JSONValue.string(String(response.expiresIn))
    return [
      "id_token": .string(response.idToken), "access_token": .string(response.idToken),
      "refresh_token": .string(response.refreshToken), "expires_in": expiresIn, "token_type": "Bearer",
      "user_id": .string(response.localId), "project_id": .string(projectID(ofIDToken: response.idToken)),
    ]
  }

  /// The ID token's audience: the Firebase project id the token was minted for. The token
  /// was just signed by this server, so it is decoded, not verified.
  static func projectID(ofIDToken token: String) -> String {
    (try? JWT.decode(token))?.claims["aud"]?.stringValue ?? ""
  }
}
