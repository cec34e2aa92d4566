import AnonAuthCrypto
import AnonAuthWire

extension FirebaseAPI {
  /// The members every sign-in answer shares, in Firebase's names and types: `expiresIn`
  /// is a string of seconds (Apple's SDK ignores a number).
  static func signedIn(_ response: AuthResponse, kind: String) -> [String: JSONValue] {
    var out: [String: JSONValue] = [
      "kind": .string(kind), "localId": .string(response.localId), "idToken": .string(response.idToken),
      "refreshToken": .string(response.refreshToken), "expiresIn": .string(String(response.expiresIn)),
    ]
    if let account = response.account {
      if !account.email.isEmpty { out["email"] = .string(account.email) }
      if !account.displayName.isEmpty { out["displayName"] = .string(account.displayName) }
    }
    return out
  }
}
