import AnonAuthCrypto
import AnonAuthWire

extension FirebaseAPI {
  /// An AnonAuth addition, not part of Firebase's API: the native
  /// `AccountService.SignInWithFirebaseIdToken` as JSON, so an app on the HTTP client can
  /// move a device that is signed in to Firebase onto the account with the same uid.
  public static let firebaseExchangeEndpoints: [Endpoint] = [
    Endpoint(
      "accounts:signInWithFirebaseIdToken", path: "/v1/accounts:signInWithFirebaseIdToken",
      handle: signInWithFirebaseIdToken)
  ]

  /// Body `{"idToken": "<Firebase ID token>"}`; answered like `signInWithPassword`, with
  /// `isNewUser` (the exchange may create the account when the project allows it) and
  /// `providerId`, the token's sign-in provider, which the client reports.
  public static func signInWithFirebaseIdToken(_ call: Call) async throws(FirebaseError) -> JSONValue {
    var request = SignInWithFirebaseIdTokenRequest()
    request.idToken = try call.required("MISSING_ID_TOKEN", "idToken")
    let response = try await call.native(AccountServiceMethods.signInWithFirebaseIdToken, request)
    var out = signedIn(response, kind: "identitytoolkit#VerifyPasswordResponse")
    out["registered"] = true
    out["isNewUser"] = .bool(response.isNewUser)
    if !response.signInProvider.isEmpty { out["providerId"] = .string(response.signInProvider) }
    return .object(out)
  }
}
