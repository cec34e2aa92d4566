import AnonAuthStore
import AnonAuthWire
import Testing

@testable import AnonAuthService

@Suite("Import rows")
struct ImportRowTests {
  let now: Int64 = 1_800_000_000_000

  func check(_ row: ImportedAccount, config: String? = "cfg") throws(ImportRow.Refusal) -> ImportRow {
    try ImportRow.check(row, projectID: "demo-project", hashConfigID: config, nowMs: now)
  }

  func reason(_ row: ImportedAccount, config: String? = "cfg") -> String? {
    do {
      _ = try check(row, config: config)
      return nil
    } catch {
      return error.reason
    }
  }

  @Test func anAccountWithoutCredentialsIsAnonymousAndCreatedNowWhenItHasNoTime() throws {
    let row = try check(ImportedAccount(localId: "anon-1"))
    #expect(row.account.isAnonymous)
    #expect(row.account.createdAtMs == now)
    #expect(row.account.lastSignInAtMs == now)
    #expect(row.identities.isEmpty)
  }

  @Test func theFirebasePasswordProviderIsTheEmailItselfAndTheHashNamesItsConfig() throws {
    let row = try check(
      ImportedAccount(
        localId: "u1", email: "Ann@Example.com", createdAtMs: 5, passwordHash: [1, 2, 3], salt: [4],
        providers: [ImportedProvider(providerId: "password", rawId: "ann@example.com", displayName: "Ann")]))
    #expect(!row.account.isAnonymous)
    #expect(row.account.email == "ann@example.com")
    // Stored as sign-up stores it, so the account lists its password provider as before.
    #expect(
      row.identities == [
        IdentityRecord(
          providerID: "password", rawID: "ann@example.com", email: "ann@example.com", displayName: "Ann")
      ])
    #expect(row.account.passwordHash == "$import$cfg$BA==$AQID")
    #expect(
      ImportedPasswordHash(stored: row.account.passwordHash ?? "")
        == .init(configID: "cfg", salt: [4], hash: [1, 2, 3]))
  }

  /// A project's IdP config takes capitals in `oidc.<name>`: accounts linked to one must
  /// import back (an export of them once could not).
  @Test func anOIDCProviderWithCapitalsImports() throws {
    let row = try check(
      ImportedAccount(localId: "u", providers: [ImportedProvider(providerId: "oidc.MyIdP", rawId: "sub-1")]))
    #expect(row.identities.map(\.providerID) == ["oidc.MyIdP"])
  }

  @Test(arguments: [
    (ImportedAccount(localId: ""), "INVALID_UID"),
    (ImportedAccount(localId: String(repeating: "a", count: 129)), "INVALID_UID"),
    (ImportedAccount(localId: "a\u{7}b"), "INVALID_UID"),
    (ImportedAccount(localId: "u", email: "no at sign"), "INVALID_EMAIL"),
    (ImportedAccount(localId: "u", createdAtMs: -1), "INVALID_FIELD"),
    (ImportedAccount(localId: "u", createdAtMs: Int64.max), "INVALID_FIELD"),
    (ImportedAccount(localId: "u", displayName: String(repeating: "n", count: 2049)), "INVALID_FIELD"),
    (ImportedAccount(localId: "u", customClaimsJson: "{\"iss\":1}"), "FORBIDDEN_CLAIM"),
    (ImportedAccount(localId: "u", customClaimsJson: "[1]"), "FORBIDDEN_CLAIM"),
    (ImportedAccount(localId: "u", email: "a@b.co", passwordHash: [1]), "MISSING_HASH_CONFIG"),
    (ImportedAccount(localId: "u", passwordHash: [1]), "INVALID_PASSWORD_HASH"),
    (
      ImportedAccount(localId: "u", email: "a@b.co", anonauthPasswordHash: "$import$x$AA==$AA=="),
      "INVALID_PASSWORD_HASH"
    ),
    (
      ImportedAccount(localId: "u", email: "a@b.co", passwordHash: [1], anonauthPasswordHash: "$scrypt$"),
      "INVALID_FIELD"
    ),
    (
      ImportedAccount(localId: "u", providers: [ImportedProvider(providerId: "Google com", rawId: "1")]),
      "INVALID_PROVIDER"
    ),
    (
      ImportedAccount(localId: "u", providers: [ImportedProvider(providerId: "google.com")]),
      "INVALID_PROVIDER"
    ),
    (
      ImportedAccount(
        localId: "u",
        providers: [
          ImportedProvider(providerId: "google.com", rawId: "1"), .init(providerId: "google.com", rawId: "2"),
        ]),
      "INVALID_PROVIDER"
    ),
  ])
  func badRowsAreRefusedWithTheirReason(row: ImportedAccount, expected: String) {
    let config: String? = expected == "MISSING_HASH_CONFIG" ? nil : "cfg"
    #expect(reason(row, config: config) == expected)
  }
}
