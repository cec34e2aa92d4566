import AnonAuthStore
import AnonAuthWire

/// Which identity providers a project accepts and how each is reached, from the
/// project's `IdpConfig` list (client secrets opened with the master key).
enum ProviderSettings {
  static let password = "password"
  static let google = "google.com"
  static let facebook = "facebook.com"
  static let apple = "apple.com"
  /// The issuer of Apple's ID tokens, when an apple.com config names none.
  static let appleIssuer = "https://appleid.apple.com"
  /// Apple's published keys, when an apple.com config has neither jwks_json nor jwks_url.
  static let appleKeysURL = "https://appleid.apple.com/auth/keys"
  /// The base of Apple's token and revoke endpoints, when api_base_url is empty.
  static let appleAPIBaseURL = "https://appleid.apple.com"
  /// The issuers Google's ID tokens carry, when a google.com config names none.
  static let googleIssuers = ["https://accounts.google.com", "accounts.google.com"]
  /// Google's published keys, when a google.com config has neither jwks_json nor jwks_url.
  static let googleKeysURL = "https://www.googleapis.com/oauth2/v3/certs"
  static let facebookGraphURL = "https://graph.facebook.com"

  /// True for the provider ids a credential may name.
  static func isKnown(_ providerID: String) -> Bool {
    providerID == password || providerID == google || providerID == facebook || providerID == apple
      || (providerID.hasPrefix("oidc.") && providerID.count > 5 && providerID.utf8.count <= 64)
  }

  /// The enabled config of `providerID` in `project`.
  /// - Throws: `OPERATION_NOT_ALLOWED` when the provider is unknown, not configured or
  ///   disabled.
  static func config(_ providerID: String, project: ProjectRecord, masterKey: [UInt8]) throws(RPCError)
    -> IdpConfig
  {
    guard isKnown(providerID), providerID != password else {
      throw RPCError(.operationNotAllowed, "provider \"\(providerID.prefix(64))\" is not supported")
    }
    let configs = IdpConfigCodec.decode(project.idpsJSON, masterKey: masterKey, withSecrets: true)
    guard let config = configs.first(where: { $0.providerId == providerID }), config.enabled,
      !config.clientId.isEmpty || config.clientIds.contains(where: { !$0.isEmpty })
    else {
      throw RPCError(.operationNotAllowed, "\(providerID) sign-in is disabled for this project")
    }
    return config
  }

  /// Password sign-in and linking need the project's email/password switch.
  /// - Throws: `OPERATION_NOT_ALLOWED`.
  static func requirePassword(_ project: ProjectRecord) throws(RPCError) {
    guard project.emailPasswordEnabled else {
      throw RPCError(.operationNotAllowed, "email/password sign-in is disabled for this project")
    }
  }
}

/// A provider identity whose credential has been verified: who the provider says the
/// user is.
struct VerifiedIdentity: Sendable, Equatable {
  let providerID: String
  /// The provider's user id (`sub`, Facebook's `id`).
  let rawID: String
  /// Normalised; empty when the provider gave none (or an unusable one).
  let email: String
  let emailVerified: Bool
  let displayName: String
  /// The token's nonce, recorded as used by the write job that signs in or links with it.
  var nonce: UsedNonce? = nil

  var record: IdentityRecord {
    IdentityRecord(providerID: providerID, rawID: rawID, email: email, displayName: displayName)
  }
}
