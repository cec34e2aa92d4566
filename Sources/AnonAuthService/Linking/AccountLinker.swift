import AnonAuthStore
import AnonAuthWire

/// The account-linking worker: checks credentials (outside any store write: verifying a
/// provider's token may wait on the network, hashing a password takes tens of
/// milliseconds), then makes each change in one write job that re-checks everything it
/// relies on. The store has one writer, so two jobs never interleave: of two concurrent
/// links of one identity to two accounts exactly one wins, and an error leaves the
/// account exactly as it was (the job's savepoint is rolled back).
struct AccountLinker {
  let env: ServiceEnvironment

  /// A credential that passed verification.
  enum Proof: Sendable {
    /// A normalised email and the new password's PHC hash.
    case password(email: String, hash: String)
    case identity(VerifiedIdentity)

    var providerID: String {
      switch self {
      case .password: ProviderSettings.password
      case .identity(let identity): identity.providerID
      }
    }
  }

  // MARK: Verification (no store writes)

  /// Verifies a credential to link: a new password is checked against the policy and
  /// hashed; a provider token is verified with the provider. An email that another
  /// account holds is refused (`EMAIL_EXISTS`) before any scrypt work; the write job
  /// checks it again.
  func proof(for credential: Credential, linkingTo localID: String, project: ProjectRecord)
    async throws(RPCError) -> Proof
  {
    if credential.providerId == ProviderSettings.password {
      try ProviderSettings.requirePassword(project)
      let email = try EmailAddress.require(credential.email)
      try PasswordPolicy.check(credential.password, project: project)
      let projectID = project.projectID
      let takenByOther = try await env.read { db in
        try AccountsRepository.byEmail(db, projectID: projectID, email: email).map { $0.localID != localID }
          ?? false
      }
      if takenByOther { throw RPCError(.emailExists, "another account has this email") }
      return .password(email: email, hash: try await env.hashPassword(credential.password))
    }
    return .identity(try await identity(for: credential, project: project))
  }

  /// Verifies a provider credential (google.com, facebook.com, oidc.*).
  /// - Throws: `OPERATION_NOT_ALLOWED` when the provider is off, `INVALID_IDP_RESPONSE`
  ///   when its token does not verify.
  func identity(for credential: Credential, project: ProjectRecord) async throws(RPCError) -> VerifiedIdentity
  {
    let config = try ProviderSettings.config(
      credential.providerId, project: project, masterKey: env.masterKey)
    let now = env.clock.nowSeconds()
    if config.providerId == ProviderSettings.facebook {
      return try await FacebookVerifier(
        config: config, outbound: env.linking.outbound, rejections: env.linking.facebookRejections
      )
      .verify(accessToken: credential.accessToken, nowSeconds: now)
    }
    return try await OIDCVerifier(config: config, cache: env.linking.jwks)
      .verify(idToken: credential.idToken, nonce: credential.nonce, nowSeconds: now)
  }

  // MARK: Link

  struct Linked: Sendable {
    let account: AccountRecord
    let identities: [IdentityRecord]
  }

  /// Links a verified credential to the account `localID` (whose ID token was issued at
  /// `tokenIssuedAt`), makes it permanent, moves `valid_since` to now and starts a new
  /// session for the linked provider.
  func link(
    _ proof: Proof, to localID: String, tokenIssuedAt: Int64, project: ProjectRecord, session: NewSession
  ) async throws(RPCError) -> Linked {
    let projectID = project.projectID
    return try await env.write { db -> Linked in
      var account = try Self.changeableAccount(db, projectID, localID, tokenIssuedAt: tokenIssuedAt)
      let before = try AccountsRepository.identities(db, projectID: projectID, localID: localID)
      let providerID = proof.providerID
      if before.contains(where: { $0.providerID == providerID })
        || (providerID == ProviderSettings.password && account.passwordHash != nil)
      {
        throw RPCError(.providerAlreadyLinked, "the account already has a \(providerID) credential")
      }

      let identity: IdentityRecord
      switch proof {
      case .identity(let verified):
        if let owner = try AccountsRepository.owner(
          db, projectID: projectID, providerID: providerID, rawID: verified.rawID), owner != localID
        {
          throw Self.credentialInUse(providerID: providerID, email: verified.email)
        }
        if !verified.email.isEmpty,
          let other = try AccountsRepository.byEmail(
            db, projectID: projectID, email: verified.email), other.localID != localID
        {
          throw RPCError(.emailExists, "another account has this email")
        }
        if account.email == nil && !verified.email.isEmpty {
          account.email = verified.email
          account.emailVerified = verified.emailVerified
        }
        if account.displayName.isEmpty { account.displayName = verified.displayName }
        identity = verified.record
      case .password(let email, let hash):
        // The password identity is the email: another account with it is EMAIL_EXISTS,
        // as Firebase answers when an email/password credential is linked.
        if let other = try AccountsRepository.byEmail(db, projectID: projectID, email: email),
          other.localID != localID
        {
          throw RPCError(.emailExists, "another account has this email")
        }
        if account.email != email {
          account.email = email
          account.emailVerified = false
        }
        account.passwordHash = hash
        identity = IdentityRecord(providerID: providerID, rawID: email, email: email)
      }
      account.isAnonymous = false
      account.scheduledDeletionAtMs = 0
      account.validSince = max(account.validSince, session.authTime)
      account.lastSignInAtMs = session.nowMs
      do {
        try AccountsRepository.update(db, account)
        try AccountsRepository.insertIdentity(db, projectID: projectID, localID: localID, identity)
      } catch let error as StoreError where error.isUniqueViolation {
        // Unreachable while the checks above run in this job; kept so that a constraint
        // can never surface as INTERNAL.
        throw error.sql?.contains("provider_identities") == true
          ? Self.credentialInUse(providerID: providerID, email: identity.email)
          : RPCError(.emailExists, "another account has this email")
      }
      try RefreshTokensRepository.insert(
        db, session.record(projectID: projectID, localID: localID, validSince: account.validSince))
      return Linked(
        account: account,
        identities: try AccountsRepository.identities(db, projectID: projectID, localID: localID))
    }
  }

  /// CREDENTIAL_ALREADY_IN_USE names the provider and the credential's email, nothing of
  /// the other account.
  static func credentialInUse(providerID: String, email: String) -> RPCError {
    RPCError(
      .credentialAlreadyInUse, "this \(providerID) identity belongs to another account",
      details: ["provider_id": providerID, "email": email])
  }

  // MARK: Sign in with a provider

  struct SignedIn: Sendable {
    let account: AccountRecord
    let identities: [IdentityRecord]
    let isNewUser: Bool
  }

  /// Signs in to the account holding `identity`, or creates a permanent account for it
  /// (counted against the sign-up quota of `ipKey`).
  func signIn(_ identity: VerifiedIdentity, project: ProjectRecord, ipKey: String, session: NewSession)
    async throws(RPCError) -> SignedIn
  {
    let projectID = project.projectID
    let newLocalID = try AccountService.newLocalID()
    let day = UTCDay.string(ms: session.nowMs)
    let outcome = try await env.write { db -> SignedIn in
      if let owner = try AccountsRepository.owner(
        db, projectID: projectID, providerID: identity.providerID, rawID: identity.rawID)
      {
        guard var account = try AccountsRepository.get(db, projectID: projectID, localID: owner) else {
          throw RPCError(.userNotFound, "the account no longer exists")
        }
        if account.disabled { throw RPCError(.userDisabled, "the account is disabled") }
        account.lastSignInAtMs = session.nowMs
        try AccountsRepository.setLastSignIn(db, projectID: projectID, localID: owner, atMs: session.nowMs)
        try RefreshTokensRepository.insert(
          db, session.record(projectID: projectID, localID: owner, validSince: account.validSince))
        return SignedIn(
          account: account,
          identities: try AccountsRepository.identities(db, projectID: projectID, localID: owner),
          isNewUser: false)
      }
      if !identity.email.isEmpty,
        try AccountsRepository.byEmail(db, projectID: projectID, email: identity.email) != nil
      {
        throw RPCError(.emailExists, "another account has this email")
      }
      try SignUpQuota.admit(db, project: project, ipKey: ipKey, nowMs: session.nowMs)
      var account = AccountRecord(
        projectID: projectID, localID: newLocalID, isAnonymous: false, createdAtMs: session.nowMs)
      if !identity.email.isEmpty {
        account.email = identity.email
        account.emailVerified = identity.emailVerified
      }
      account.displayName = identity.displayName
      try AccountsRepository.insert(db, account)
      try AccountsRepository.insertIdentity(db, projectID: projectID, localID: newLocalID, identity.record)
      try RefreshTokensRepository.insert(db, session.record(projectID: projectID, localID: newLocalID))
      try UsageRepository.countSignUp(db, projectID: projectID, day: day, provider: identity.providerID)
      return SignedIn(account: account, identities: [identity.record], isNewUser: true)
    }
    if outcome.isNewUser { env.metrics.signedUp(provider: identity.providerID) }
    return outcome
  }

  // MARK: Unlink

  /// The account as a change's write job finds it: still there, enabled, and the ID
  /// token that asked for the change not revoked since it was checked.
  private static func changeableAccount(
    _ db: Database, _ projectID: String, _ localID: String, tokenIssuedAt: Int64
  ) throws -> AccountRecord {
    guard let account = try AccountsRepository.get(db, projectID: projectID, localID: localID) else {
      throw RPCError(.userNotFound, "the account no longer exists")
    }
    if account.disabled { throw RPCError(.userDisabled, "the account is disabled") }
    if tokenIssuedAt < account.validSince { throw RPCError(.tokenExpired, "the ID token was revoked") }
    return account
  }

  /// Removes a provider from the account. Unlinking `password` also removes the email
  /// and the password hash. The account stays permanent.
  func unlink(_ providerID: String, from localID: String, tokenIssuedAt: Int64, project: ProjectRecord)
    async throws(RPCError) -> Linked
  {
    let projectID = project.projectID
    return try await env.write { db -> Linked in
      var account = try Self.changeableAccount(db, projectID, localID, tokenIssuedAt: tokenIssuedAt)
      let removed = try AccountsRepository.deleteIdentity(
        db, projectID: projectID, localID: localID, providerID: providerID)
      if providerID == ProviderSettings.password {
        guard removed || account.passwordHash != nil else {
          throw RPCError(.noSuchProvider, "the account has no password credential")
        }
        account.passwordHash = nil
        account.email = nil
        account.emailVerified = false
        try AccountsRepository.update(db, account)
      } else if !removed {
        throw RPCError(.noSuchProvider, "the account has no \(providerID.prefix(64)) credential")
      }
      return Linked(
        account: account,
        identities: try AccountsRepository.identities(db, projectID: projectID, localID: localID))
    }
  }
}
