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

  /// Verifies a provider credential (google.com, apple.com, facebook.com, oidc.*).
  /// - Throws: `OPERATION_NOT_ALLOWED` when the provider is off, `INVALID_IDP_RESPONSE`
  ///   when its token does not verify.
  func identity(for credential: Credential, project: ProjectRecord, _ admitted: Admitted)
    async throws(RPCError) -> VerifiedIdentity
  {
    let config = try ProviderSettings.config(
      credential.providerId, project: project, masterKey: env.masterKey)
    let now = env.clock.nowSeconds()
    if config.providerId == ProviderSettings.facebook {
      return try await FacebookVerifier(
        config: config, outbound: env.linking.outbound(admitted), rejections: env.linking.facebookRejections
      )
      .verify(accessToken: credential.accessToken, nowSeconds: now)
    }
    let verified = try await OIDCVerifier(config: config, cache: env.linking.jwks(admitted))
      .verify(idToken: credential.idToken, nonce: credential.nonce, nowSeconds: now)
    // Apple's tokens carry no name: the app sends the one Apple gave it, which the
    // account takes when it has none (`AccountService.credential` checked it).
    guard config.providerId == ProviderSettings.apple, verified.displayName.isEmpty,
      !credential.displayName.isEmpty
    else { return verified }
    return VerifiedIdentity(
      providerID: verified.providerID, rawID: verified.rawID, email: verified.email,
      emailVerified: verified.emailVerified, displayName: ProviderText.clippedName(credential.displayName),
      nonce: verified.nonce)
  }

  // MARK: Link

  struct Linked: Sendable {
    let account: AccountRecord
    let identities: [IdentityRecord]
  }

  /// Links a password to the account `localID`, at most one such link per account at a
  /// time, and with every refusal decided before the password is hashed:
  ///
  /// 1. a second password link of the same account while one is in flight gets
  ///    `TOO_MANY_ATTEMPTS_TRY_LATER` (`retry_after_seconds` 1) at once: 60 parallel
  ///    links on one token cost one hash, not 60;
  /// 2. one write job checks the account (still there, enabled, token not revoked),
  ///    the recent-sign-in rule, `PROVIDER_ALREADY_LINKED`, then counts the attempt
  ///    against the per-IP sign-up quota (`TOO_MANY_ATTEMPTS_TRY_LATER` past it) and
  ///    only then looks the email up: `EMAIL_EXISTS` keeps its counted place, so probing
  ///    which emails are taken goes no faster than signing up;
  /// 3. the hash (a failure to hash gives the quota place back), then `link`.
  ///
  /// - Parameter authTime: the caller's `auth_time`, which the new session keeps.
  func linkPassword(
    _ credential: Credential, to localID: String, tokenIssuedAt: Int64, authTime: Int64, ipKey: String,
    project: ProjectRecord, _ admitted: Admitted
  ) async throws(RPCError) -> (Linked, NewSession) {
    try ProviderSettings.requirePassword(project)
    let email = try EmailAddress.require(credential.email)
    try PasswordPolicy.check(credential.password, project: project)
    let projectID = project.projectID
    let slot = projectID + "\u{0}" + localID
    guard env.linking.passwordLinks.claim(slot) else {
      throw RPCError(
        .tooManyAttempts, "a password link of this account is already in progress; try again later",
        details: ["retry_after_seconds": "1"])
    }
    defer { env.linking.passwordLinks.release(slot) }
    // Its two writes, its hash and its token are admitted per IP and project together,
    // before the first of them (in the call's scope, `AccountService.linkWithCredential`).
    try admitted.reserve([.write, .password, .write, .signing])
    let clock = env.clock
    let admittedAtMs = clock.nowMs()
    let refusal: RPCError? = try await countedWrite(admitted) { db -> RPCError? in
      let account = try Self.changeableAccount(db, projectID, localID, tokenIssuedAt: tokenIssuedAt)
      try RecentSignIn.require(
        account, authTime: authTime, nowSeconds: clock.nowSeconds(), for: "linking a credential")
      let identities = try AccountsRepository.identities(db, projectID: projectID, localID: localID)
      if account.passwordHash != nil
        || identities.contains(where: { $0.providerID == ProviderSettings.password })
      {
        throw RPCError(.providerAlreadyLinked, "the account already has a password credential")
      }
      try SignUpQuota.admit(db, project: project, ipKey: ipKey, nowMs: admittedAtMs)
      if let other = try AccountsRepository.byEmail(db, projectID: projectID, email: email),
        other.localID != localID
      {
        return RPCError(.emailExists, "another account has this email")  // returned: the count stays
      }
      return nil
    }
    if let refusal { throw refusal }
    let hash = try await env.hashPassword(
      credential.password, admitted, refundingQuotaOf: projectID, ipKey: ipKey, atMs: admittedAtMs)
    let session = try NewSession(
      provider: ProviderSettings.password, nowMs: clock.nowMs(), authTime: authTime)
    let linked = try await link(
      .password(email: email, hash: hash), to: localID, tokenIssuedAt: tokenIssuedAt, authTime: authTime,
      ipKey: ipKey, project: project, session: session, admitted)
    return (linked, session)
  }

  /// Links a verified credential to the account `localID` (whose ID token was issued at
  /// `tokenIssuedAt` with `authTime`), makes it permanent, moves `valid_since` to now and
  /// starts a new session for the linked provider, which keeps `session.authTime`.
  /// A provider identity whose email another account holds is `EMAIL_EXISTS`, counted
  /// against the per-IP sign-up quota of `ipKey` like every `EMAIL_EXISTS`.
  func link(
    _ proof: Proof, to localID: String, tokenIssuedAt: Int64, authTime: Int64, ipKey: String,
    project: ProjectRecord, session: NewSession, _ admitted: Admitted
  ) async throws(RPCError) -> Linked {
    let projectID = project.projectID
    let clock = env.clock
    let outcome = try await countedWrite(admitted) { db -> LinkOutcome in
      var account = try Self.changeableAccount(db, projectID, localID, tokenIssuedAt: tokenIssuedAt)
      // Again here: the account may have become permanent since the call checked it.
      try RecentSignIn.require(
        account, authTime: authTime, nowSeconds: clock.nowSeconds(), for: "linking a credential")
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
        try verified.nonce?.claim(db, projectID: projectID, nowMs: session.nowMs)
        if let owner = try AccountsRepository.owner(
          db, projectID: projectID, providerID: providerID, rawID: verified.rawID), owner != localID
        {
          throw Self.credentialInUse(providerID: providerID, email: verified.email)
        }
        if !verified.email.isEmpty,
          let other = try AccountsRepository.byEmail(
            db, projectID: projectID, email: verified.email), other.localID != localID
        {
          try SignUpQuota.admit(db, project: project, ipKey: ipKey, nowMs: session.nowMs)
          return .refused(RPCError(.emailExists, "another account has this email"))
        }
        if account.email == nil && !verified.email.isEmpty {
          account.email = verified.email
          account.emailVerified = verified.emailVerified
        }
        if account.displayName.isEmpty { account.displayName = verified.displayName }
        identity = verified.record
      case .password(let email, let hash):
        // The password identity is the email: another account with it is EMAIL_EXISTS,
        // as Firebase answers when an email/password credential is linked (counted
        // against the quota already, by `linkPassword`'s admission).
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
      account.validSince = max(account.validSince, session.nowMs / 1000)
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
      return .linked(
        Linked(
          account: account,
          identities: try AccountsRepository.identities(db, projectID: projectID, localID: localID)))
    }
    switch outcome {
    case .linked(let linked): return linked
    case .refused(let error): throw error
    }
  }

  /// `env.write`, admitted as a write in the call's scope, for a job that may count
  /// against the sign-up quota: the quota's refusals are counted in the metrics.
  private func countedWrite<T: Sendable>(
    _ admitted: Admitted, _ job: @escaping @Sendable (Database) throws -> T
  ) async throws(RPCError) -> T {
    do {
      return try await env.write(admitted, job)
    } catch {
      if error.reason == Reason.tooManyAttempts.name { env.metrics.quotaRefusals.add(1, ordering: .relaxed) }
      throw error
    }
  }

  /// What a write job decided: a refusal is returned rather than thrown when the job
  /// made a change that must stay (a counted place in the sign-up quota).
  private enum LinkOutcome: Sendable {
    case linked(Linked)
    case refused(RPCError)
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
    /// The provider ids the account lost because this verified identity took it over
    /// (`takeOver`); empty otherwise.
    var displaced: [String] = []
  }

  private enum SignInOutcome: Sendable {
    case signedIn(SignedIn)
    case refused(RPCError)
  }

  /// Signs in to the account holding `identity`, or creates a permanent account for it
  /// (counted against the sign-up quota of `ipKey`). When another account holds the
  /// identity's email: a verified email takes over an account whose email is not
  /// verified (`takeOver`); otherwise `EMAIL_EXISTS`, counted against the quota.
  func signIn(
    _ identity: VerifiedIdentity, project: ProjectRecord, ipKey: String, session: NewSession,
    _ admitted: Admitted
  ) async throws(RPCError) -> SignedIn {
    let newLocalID = try env.uidOrder.newLocalID(nowMs: session.nowMs)
    let day = UTCDay.string(ms: session.nowMs)
    let outcome = try await signInJob(
      identity, project: project, ipKey: ipKey, session: session, newLocalID: newLocalID, day: day, admitted)
    switch outcome {
    case .refused(let error):
      throw error
    case .signedIn(let signedIn):
      if signedIn.isNewUser { env.metrics.signedUp(provider: identity.providerID) }
      return signedIn
    }
  }

  /// `signIn`'s write job.
  private func signInJob(
    _ identity: VerifiedIdentity, project: ProjectRecord, ipKey: String, session: NewSession,
    newLocalID: String, day: String, _ admitted: Admitted
  ) async throws(RPCError) -> SignInOutcome {
    let projectID = project.projectID
    return try await env.write(admitted) { db -> SignInOutcome in
      try identity.nonce?.claim(db, projectID: projectID, nowMs: session.nowMs)
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
        return .signedIn(
          SignedIn(
            account: account,
            identities: try AccountsRepository.identities(db, projectID: projectID, localID: owner),
            isNewUser: false))
      }
      if !identity.email.isEmpty,
        let holder = try AccountsRepository.byEmail(db, projectID: projectID, email: identity.email)
      {
        if identity.emailVerified && !holder.emailVerified {
          return .signedIn(try Self.takeOver(db, holder, by: identity, session: session))
        }
        // Counted like a sign-up, so that probing which emails are taken goes no faster.
        try SignUpQuota.admit(db, project: project, ipKey: ipKey, nowMs: session.nowMs)
        return .refused(RPCError(.emailExists, "another account has this email"))
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
      return .signedIn(SignedIn(account: account, identities: [identity.record], isNewUser: true))
    }
  }

  /// A provider identity with a verified email signs in to the account that holds the
  /// same email unverified, as Firebase does (its auth emulator's
  /// `handleIdpSigninEmailRequired`): whoever made that account never proved the
  /// address, and the provider just did. The uid stays; the account loses its password
  /// hash and every provider identity it had (the password identity included), takes the
  /// provider's display name (the photo URL is cleared, as the provider gives none here),
  /// gets `email_verified` true, and `valid_since` moves to now and every refresh token
  /// of the account is revoked, so no session of whoever held it before survives. Its
  /// custom claims stay (Firebase keeps them too). A disabled account is refused with
  /// `USER_DISABLED` and left unchanged. Not a sign-up: no quota, `is_new_user` false.
  private static func takeOver(
    _ db: Database, _ holder: AccountRecord, by identity: VerifiedIdentity, session: NewSession
  ) throws -> SignedIn {
    if holder.disabled { throw RPCError(.userDisabled, "the account is disabled") }
    let projectID = holder.projectID
    let localID = holder.localID
    let displaced = try AccountsRepository.identities(db, projectID: projectID, localID: localID)
      .map(\.providerID)
    var account = holder
    account.passwordHash = nil
    account.emailVerified = true
    account.displayName = identity.displayName
    account.photoURL = ""
    account.isAnonymous = false
    account.scheduledDeletionAtMs = 0
    account.validSince = max(account.validSince, session.nowMs / 1000)
    account.lastSignInAtMs = session.nowMs
    try AccountsRepository.update(db, account)
    try AccountsRepository.deleteIdentities(db, projectID: projectID, localID: localID)
    try RefreshTokensRepository.revokeAccount(db, projectID: projectID, localID: localID)
    try AccountsRepository.insertIdentity(db, projectID: projectID, localID: localID, identity.record)
    try RefreshTokensRepository.insert(
      db, session.record(projectID: projectID, localID: localID, validSince: account.validSince))
    let passwordGone = holder.passwordHash != nil && !displaced.contains(ProviderSettings.password)
    return SignedIn(
      account: account, identities: [identity.record], isNewUser: false,
      displaced: displaced + (passwordGone ? [ProviderSettings.password] : []))
  }

  // MARK: Unlink

  /// The account as a change's write job finds it: still there, enabled, and the ID
  /// token that asked for the change not revoked since it was checked.
  static func changeableAccount(
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
  /// - Throws: `CREDENTIAL_TOO_OLD_LOGIN_AGAIN` (the recent-sign-in rule, for a permanent
  ///   account), `NO_SUCH_PROVIDER`, `LAST_SIGN_IN_METHOD` when the provider is the only
  ///   sign-in method the permanent account has: without it nobody could ever sign in to
  ///   the account again, so a stolen session could lock its owner out for good.
  func unlink(
    _ providerID: String, from localID: String, tokenIssuedAt: Int64, authTime: Int64, project: ProjectRecord,
    _ admitted: Admitted
  ) async throws(RPCError) -> Linked {
    let projectID = project.projectID
    let clock = env.clock
    return try await env.write(admitted) { db -> Linked in
      var account = try Self.changeableAccount(db, projectID, localID, tokenIssuedAt: tokenIssuedAt)
      try RecentSignIn.require(
        account, authTime: authTime, nowSeconds: clock.nowSeconds(), for: "unlinking a provider")
      let identities = try AccountsRepository.identities(db, projectID: projectID, localID: localID)
      var methods = Set(identities.map(\.providerID))
      if account.passwordHash != nil { methods.insert(ProviderSettings.password) }
      guard methods.contains(providerID) else {
        throw RPCError(.noSuchProvider, "the account has no \(providerID.prefix(64)) credential")
      }
      if !account.isAnonymous && methods.count == 1 {
        throw RPCError(
          .lastSignInMethod,
          "\(providerID.prefix(64)) is the account's only sign-in method; link another one first")
      }
      try Self.removeProvider(providerID, from: &account, db)
      if providerID == ProviderSettings.password { try AccountsRepository.update(db, account) }
      return Linked(
        account: account,
        identities: try AccountsRepository.identities(db, projectID: projectID, localID: localID))
    }
  }
}

extension AccountLinker {
  /// Deletes `providerID`'s identity of `account`. The password provider takes the email
  /// with it: the hash, the email and its verification are cleared in `account`, which
  /// the caller writes. Unlinking and the admin's `delete_providers` both remove so.
  static func removeProvider(_ providerID: String, from account: inout AccountRecord, _ db: Database) throws {
    _ = try AccountsRepository.deleteIdentity(
      db, projectID: account.projectID, localID: account.localID, providerID: providerID)
    if providerID == ProviderSettings.password {
      account.passwordHash = nil
      account.email = nil
      account.emailVerified = false
    }
  }
}
