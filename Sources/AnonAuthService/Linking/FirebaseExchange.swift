import AnonAuthStore
import AnonAuthWire

/// The Firebase session exchange's store side: one write job that finds the account with
/// the Firebase token's uid (or makes it, when the project allows), stamps the sign-in
/// and starts a session. Accounts imported from Firebase keep their uids, so the uid is
/// the whole link between the two systems.
struct FirebaseExchange {
  let env: ServiceEnvironment

  struct SignedIn: Sendable {
    let account: AccountRecord
    let identities: [IdentityRecord]
    let isNewUser: Bool
    /// The `sign_in_provider` of the session (see `signInProvider`).
    let signInProvider: String
    /// The session's `auth_time`: the Firebase token's, never later than now.
    let authTime: Int64
  }

  /// What AnonAuth's tokens say the account signed in with:
  /// - an anonymous account: `anonymous`, whatever the Firebase token says;
  /// - a permanent account that holds the token's provider (`password` when it has a
  ///   password): that provider;
  /// - a permanent account that does not: its own first provider (`password` first,
  ///   then linked providers by id), so that a token never names a provider the account
  ///   lacks;
  /// - a permanent account without any credential (made by this exchange, or imported
  ///   with an email only): the token's provider, or `custom` (Firebase's name for a
  ///   server-minted session) when the token was anonymous.
  static func signInProvider(account: AccountRecord, identities: [IdentityRecord], token: String) -> String {
    if account.isAnonymous { return "anonymous" }
    var held = identities.map(\.providerID).filter { $0 != ProviderSettings.password }
    if account.passwordHash != nil
      || identities.contains(where: { $0.providerID == ProviderSettings.password })
    {
      held.insert(ProviderSettings.password, at: 0)
    }
    if held.contains(token) { return token }
    if let first = held.first { return first }
    return token == "anonymous" ? "custom" : token
  }

  /// Signs in to the account `identity.uid`, or makes it when the project's
  /// `firebase_create_unknown_users` is on (counted against the sign-up quota of
  /// `ipKey`): anonymous for an anonymous Firebase token, else permanent with the
  /// token's email, name and picture.
  /// - Throws: `USER_NOT_FOUND` (unknown uid, creation off), `USER_DISABLED`,
  ///   `EMAIL_EXISTS` (a new permanent account's email belongs to another account;
  ///   counted against the sign-up quota),
  ///   `TOO_MANY_ATTEMPTS_TRY_LATER` (sign-up quota).
  func signIn(
    _ identity: FirebaseIdentity, project: ProjectRecord, ipKey: String, session: NewSession,
    _ admitted: Admitted
  ) async throws(RPCError) -> SignedIn {
    let day = UTCDay.string(ms: session.nowMs)
    let authTime = min(identity.authTime, session.authTime)
    let outcome = try await job(
      identity, project: project, ipKey: ipKey, session: session, day: day, authTime: authTime, admitted)
    let signedIn = try outcome.get()
    if signedIn.isNewUser { env.metrics.signedUp(provider: signedIn.signInProvider) }
    return signedIn
  }

  /// `signIn`'s write job.
  private func job(
    _ identity: FirebaseIdentity, project: ProjectRecord, ipKey: String, session: NewSession, day: String,
    authTime: Int64, _ admitted: Admitted
  ) async throws(RPCError) -> Result<SignedIn, RPCError> {
    let projectID = project.projectID
    let uid = identity.uid
    return try await env.write(admitted) { db -> Result<SignedIn, RPCError> in
      if var account = try AccountsRepository.get(db, projectID: projectID, localID: uid) {
        if account.disabled { throw RPCError(.userDisabled, "the account is disabled") }
        let identities = try AccountsRepository.identities(db, projectID: projectID, localID: uid)
        let provider = Self.signInProvider(
          account: account, identities: identities, token: identity.signInProvider)
        account.lastSignInAtMs = session.nowMs
        try AccountsRepository.setLastSignIn(db, projectID: projectID, localID: uid, atMs: session.nowMs)
        var record = session.record(projectID: projectID, localID: uid, validSince: account.validSince)
        record.signInProvider = provider
        record.authTime = authTime
        try RefreshTokensRepository.insert(db, record)
        return .success(
          SignedIn(
            account: account, identities: identities, isNewUser: false, signInProvider: provider,
            authTime: authTime))
      }
      // Read in the job, so that a switch turned off a moment ago is obeyed.
      let current = try ProjectsRepository.get(db, projectID) ?? project
      guard current.firebaseCreateUnknownUsers else {
        throw RPCError(.userNotFound, "no account has the Firebase ID token's uid")
      }
      var account = AccountRecord(
        projectID: projectID, localID: uid, isAnonymous: identity.isAnonymous, createdAtMs: session.nowMs)
      account.displayName = identity.displayName
      account.photoURL = identity.photoURL
      if identity.isAnonymous {
        if current.autoCleanupEnabled {
          account.scheduledDeletionAtMs = session.nowMs + CleanupRepository.lifetimeMs
        }
      } else if !identity.email.isEmpty {
        if try AccountsRepository.byEmail(db, projectID: projectID, email: identity.email) != nil {
          // Counted like a sign-up (and returned, so the count stays), so that probing
          // which emails are taken goes no faster than signing up.
          try SignUpQuota.admit(db, project: current, ipKey: ipKey, nowMs: session.nowMs)
          return .failure(RPCError(.emailExists, "another account has this email"))
        }
        account.email = identity.email
        account.emailVerified = identity.emailVerified
      }
      try SignUpQuota.admit(db, project: current, ipKey: ipKey, nowMs: session.nowMs)
      try AccountsRepository.insert(db, account)
      let provider = Self.signInProvider(account: account, identities: [], token: identity.signInProvider)
      var record = session.record(projectID: projectID, localID: uid)
      record.signInProvider = provider
      record.authTime = authTime
      try RefreshTokensRepository.insert(db, record)
      try UsageRepository.countSignUp(db, projectID: projectID, day: day, provider: provider)
      return .success(
        SignedIn(
          account: account, identities: [], isNewUser: true, signInProvider: provider, authTime: authTime))
    }
  }
}
