import AnonAuthCrypto
import AnonAuthWire

/// The rules custom claims follow wherever they come from (`SetCustomClaims`, an
/// imported account's `customAttributes`): they are merged into every ID token, so they
/// stay small and cannot overwrite a claim the token's meaning depends on.
enum CustomClaimsPolicy {
  static let maximumBytes = 1000

  /// - Throws: `FORBIDDEN_CLAIM` saying what is wrong; an empty string clears the claims.
  static func check(_ json: String) throws(RPCError) {
    guard !json.isEmpty else { return }
    guard json.utf8.count <= maximumBytes else {
      throw RPCError(.forbiddenClaim, "custom claims are limited to \(maximumBytes) bytes of JSON")
    }
    guard let object = JSONValue(lenientJSONBytes: Array(json.utf8))?.objectValue else {
      throw RPCError(.forbiddenClaim, "custom claims must be a JSON object")
    }
    if let reserved = object.keys.sorted().first(where: { IDTokenClaims.reserved.contains($0) }) {
      throw RPCError(.forbiddenClaim, "\"\(reserved)\" is a reserved claim")
    }
  }
}
