import AnonAuthStore
import AnonAuthWire

extension AccountInfo {
  /// The wire view of a stored account. Anonymous accounts have no provider entries.
  init(_ account: AccountRecord, identities: [IdentityRecord]) {
    self.init()
    localId = account.localID
    isAnonymous = account.isAnonymous
    email = account.email ?? ""
    emailVerified = account.emailVerified
    displayName = account.displayName
    disabled = account.disabled
    createdAtMs = account.createdAtMs
    lastSignInAtMs = account.lastSignInAtMs
    lastRefreshAtMs = account.lastRefreshAtMs
    validSince = account.validSince
    customClaimsJson = account.customClaimsJSON
    scheduledDeletionAtMs = account.scheduledDeletionAtMs
    providers = identities.map { identity in
      var info = ProviderInfo()
      info.providerId = identity.providerID
      info.rawId = identity.rawID
      info.email = identity.email
      info.displayName = identity.displayName
      return info
    }
  }
}
