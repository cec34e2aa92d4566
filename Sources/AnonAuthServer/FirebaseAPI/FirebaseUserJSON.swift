import AnonAuthCrypto
import AnonAuthWire
import Foundation

/// A native `AccountInfo` as Firebase's user object (the items of `accounts:lookup`'s
/// `users`, and of the admin API's answers). What Firebase's SDKs need of it: `createdAt`
/// and `lastLoginAt` as strings of epoch milliseconds, a non-empty `passwordHash` for a
/// password user (a placeholder: the hash never leaves the store), and a `providerId` on
/// every `providerUserInfo` item (an anonymous user has none). Empty fields are left out,
/// as Firebase does.
public enum FirebaseUserJSON {
  /// Firebase's redacted hash: base64 of "REDACTED".
  public static let passwordHashPlaceholder = "UkVEQUNURUQ="

  public static func user(_ account: AccountInfo) -> JSONValue {
    var user: [String: JSONValue] = ["localId": .string(account.localId)]
    if !account.email.isEmpty {
      user["email"] = .string(account.email)
      user["emailVerified"] = .bool(account.emailVerified)
    }
    if !account.displayName.isEmpty { user["displayName"] = .string(account.displayName) }
    if account.disabled { user["disabled"] = true }
    user["createdAt"] = .string(String(account.createdAtMs))
    if account.lastSignInAtMs > 0 { user["lastLoginAt"] = .string(String(account.lastSignInAtMs)) }
    if account.lastRefreshAtMs > 0 { user["lastRefreshAt"] = .string(rfc3339(ms: account.lastRefreshAtMs)) }
    if account.validSince > 0 { user["validSince"] = .string(String(account.validSince)) }
    if !account.customClaimsJson.isEmpty { user["customAttributes"] = .string(account.customClaimsJson) }
    let providers = account.providers.map(providerUserInfo)
    if !providers.isEmpty { user["providerUserInfo"] = .array(providers) }
    if account.providers.contains(where: { $0.providerId == "password" }) {
      user["passwordHash"] = .string(passwordHashPlaceholder)
    }
    return .object(user)
  }

  static func providerUserInfo(_ provider: ProviderInfo) -> JSONValue {
    var item: [String: JSONValue] = ["providerId": .string(provider.providerId)]
    let rawID = provider.providerId == "password" && provider.rawId.isEmpty ? provider.email : provider.rawId
    if !rawID.isEmpty {
      item["rawId"] = .string(rawID)
      item["federatedId"] = .string(rawID)
    }
    if !provider.email.isEmpty { item["email"] = .string(provider.email) }
    if !provider.displayName.isEmpty { item["displayName"] = .string(provider.displayName) }
    return .object(item)
  }

  /// "2026-11-25T21:30:00.123Z", as Firebase writes `lastRefreshAt`.
  static func rfc3339(ms: Int64) -> String {
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    return formatter.string(from: Date(timeIntervalSince1970: Double(ms) / 1000))
  }
}
