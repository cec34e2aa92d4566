import AnonAuthCrypto
import AnonAuthStore
import AnonAuthWire

/// One `ImportedAccount` checked on its own (no store needed) and turned into the rows it
/// becomes; or the documented reason it cannot be imported.
struct ImportRow: Sendable {
  var account: AccountRecord
  var identities: [IdentityRecord]

  /// A row-level refusal: reported with the row's index, the rest of the batch goes on.
  struct Refusal: Error, Sendable {
    /// The name of an `ImportRowReason`, as `ImportRowError` carries it.
    let reason: String
    let message: String

    init(reason: ImportRowReason, message: String) {
      self.reason = reason.name
      self.message = message
    }
  }

  static let maximumUIDBytes = 128
  static let maximumTextBytes = 2048

  /// - Parameters:
  ///   - hashConfigID: the id of the request's sealed hash config, nil when it has none.
  ///   - nowMs: the import's time: rows without `created_at_ms` were created now.
  static func check(
    _ row: ImportedAccount, projectID: String, hashConfigID: String?, nowMs: Int64
  ) throws(Refusal) -> ImportRow {
    let uid = row.localId
    guard !uid.isEmpty, uid.utf8.count <= maximumUIDBytes, !uid.unicodeScalars.contains(where: isControl)
    else {
      throw Refusal(
        reason: .invalidUID, message: "local_id must be 1 to 128 bytes without control characters")
    }
    var email: String?
    if !row.email.isEmpty {
      guard let normalized = EmailAddress.normalize(row.email) else {
        throw Refusal(reason: .invalidEmail, message: "email is not a valid address")
      }
      email = normalized
    }
    for (name, value) in [("display_name", row.displayName), ("photo_url", row.photoUrl)]
    where value.utf8.count > maximumTextBytes || value.unicodeScalars.contains(where: isControl) {
      throw Refusal(reason: .invalidField, message: "\(name) is over 2048 bytes or has control characters")
    }
    guard row.createdAtMs >= 0, row.createdAtMs <= nowMs + 86_400_000, row.lastSignInAtMs >= 0,
      row.lastSignInAtMs <= nowMs + 86_400_000
    else {
      throw Refusal(reason: .invalidField, message: "created_at_ms and last_sign_in_at_ms must be 0...now")
    }
    do {
      try CustomClaimsPolicy.check(row.customClaimsJson)
    } catch {
      throw Refusal(reason: .forbiddenClaim, message: error.message)
    }
    let passwordHash = try storedPasswordHash(row, hashConfigID: hashConfigID)
    if passwordHash != nil && email == nil {
      throw Refusal(
        reason: .invalidPasswordHash, message: "a password hash needs an email to sign in with")
    }
    var identities = try providers(row)
    if let email, passwordHash != nil {
      identities.insert(passwordIdentity(row, email: email), at: 0)
    }
    let created = row.createdAtMs == 0 ? nowMs : row.createdAtMs
    var account = AccountRecord(
      projectID: projectID, localID: uid,
      isAnonymous: email == nil && identities.isEmpty && passwordHash == nil, createdAtMs: created)
    account.email = email
    account.emailVerified = row.emailVerified
    account.displayName = row.displayName
    account.photoURL = row.photoUrl
    account.disabled = row.disabled
    account.passwordHash = passwordHash
    account.lastSignInAtMs = row.lastSignInAtMs == 0 ? created : row.lastSignInAtMs
    account.customClaimsJSON = row.customClaimsJson
    return ImportRow(account: account, identities: identities)
  }

  private static func storedPasswordHash(_ row: ImportedAccount, hashConfigID: String?) throws(Refusal)
    -> String?
  {
    if !row.anonauthPasswordHash.isEmpty {
      guard row.passwordHash.isEmpty else {
        throw Refusal(
          reason: .invalidField, message: "password_hash and anonauth_password_hash are both set")
      }
      // AnonAuth's own hashes are self-contained PHC strings; an imported one that is
      // still in its `$import$` form names a config of another store and cannot be used.
      guard let phc = try? PHCString(parsing: row.anonauthPasswordHash), phc.text == row.anonauthPasswordHash
      else {
        throw Refusal(
          reason: .invalidPasswordHash, message: "anonauth_password_hash is not a scrypt PHC string")
      }
      return phc.text
    }
    guard !row.passwordHash.isEmpty else { return nil }
    guard let hashConfigID else {
      throw Refusal(
        reason: .missingHashConfig, message: "a row has password_hash but the request has no hash_config")
    }
    guard row.passwordHash.count <= ImportHashConfig.hashBytesRange.upperBound,
      row.salt.count <= ImportHashConfig.maxSaltBytes
    else { throw Refusal(reason: .invalidPasswordHash, message: "password_hash or salt is too long") }
    return ImportedPasswordHash(configID: hashConfigID, salt: row.salt, hash: row.passwordHash).stored
  }

  /// The password credential as sign-up and linking store it (raw id and email: the
  /// account's email), so that an imported account lists its providers as the original did
  /// and an export of it imports back the same. The row's own `password` entry, if any,
  /// gives its display name and photo.
  private static func passwordIdentity(_ row: ImportedAccount, email: String) -> IdentityRecord {
    let listed = row.providers.first { $0.providerId == ProviderSettings.password }
    return IdentityRecord(
      providerID: ProviderSettings.password, rawID: email, email: email,
      displayName: listed?.displayName ?? "", photoURL: listed?.photoUrl ?? "")
  }

  private static func providers(_ row: ImportedAccount) throws(Refusal) -> [IdentityRecord] {
    var seen: Set<String> = []
    var out: [IdentityRecord] = []
    for provider in row.providers {
      let id = provider.providerId
      // Firebase lists the password credential as a provider too; the account's email and
      // hash are that credential (`passwordIdentity`), without a hash there is none.
      if id == ProviderSettings.password {
        guard provider.displayName.utf8.count <= maximumTextBytes,
          provider.photoUrl.utf8.count <= maximumTextBytes
        else {
          throw Refusal(
            reason: .invalidField, message: "a provider's display_name or photo_url is too long")
        }
        continue
      }
      guard !id.isEmpty, id.utf8.count <= 64,
        // The ids a project's IdP config accepts (ProjectConfigMapping), capitals included:
        // an account linked to `oidc.MyIdP` must import back.
        id.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) }),
        !provider.rawId.isEmpty, provider.rawId.utf8.count <= 256,
        !provider.rawId.unicodeScalars.contains(where: isControl)
      else {
        throw Refusal(
          reason: .invalidProvider, message: "a provider needs a provider_id of [A-Za-z0-9._-] and a raw_id"
        )
      }
      guard seen.insert(id).inserted else {
        throw Refusal(reason: .invalidProvider, message: "\(id) appears twice")
      }
      var identityEmail = ""
      if !provider.email.isEmpty { identityEmail = EmailAddress.normalize(provider.email) ?? "" }
      guard provider.displayName.utf8.count <= maximumTextBytes,
        provider.photoUrl.utf8.count <= maximumTextBytes
      else {
        throw Refusal(reason: .invalidField, message: "a provider's display_name or photo_url is too long")
      }
      out.append(
        IdentityRecord(
          providerID: id, rawID: provider.rawId, email: identityEmail, displayName: provider.displayName,
          photoURL: provider.photoUrl))
    }
    return out
  }

  private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
    scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
  }
}
