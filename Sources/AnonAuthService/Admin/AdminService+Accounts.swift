import AnonAuthCrypto
import AnonAuthStore
import AnonAuthWire

/// AdminService: one project's accounts.
extension AdminService {
  static let maxPageSize: UInt32 = 1000
  static let defaultPageSize: UInt32 = 100

  /// Keyset pagination on local id: the page token is the last local id, base64url, so
  /// pages stay stable while accounts come and go.
  public func listAccounts(_ request: ListAccountsRequest, context: CallContext) async throws(RPCError)
    -> ListAccountsResponse
  {
    let project = try existing(request.projectId, context)
    let filter: AccountListRepository.Filter
    switch request.filter {
    case .all: filter = .all
    case .anonymous: filter = .anonymous
    case .permanent: filter = .permanent
    default: throw RPCError(.invalidArgument, "filter must be ALL, ANONYMOUS or PERMANENT")
    }
    guard request.pageSize <= Self.maxPageSize else {
      throw RPCError(.invalidArgument, "page_size must be at most \(Self.maxPageSize)")
    }
    let size = Int(request.pageSize == 0 ? Self.defaultPageSize : request.pageSize)
    let after = try Self.pageCursor(request.pageToken)
    let projectID = project.projectID
    let cursor = after
    let (accounts, identities, total) = try await env.read { db in
      let page = try AccountListRepository.page(
        db, projectID: projectID, filter: filter, afterLocalID: cursor, limit: size + 1)
      let shown = Array(page.prefix(size))
      let ids = try AccountListRepository.identities(db, projectID: projectID, localIDs: shown.map(\.localID))
      return (page, ids, try AccountListRepository.count(db, projectID: projectID, filter: filter))
    }
    var response = ListAccountsResponse()
    response.accounts = accounts.prefix(size).map {
      AccountInfo($0, identities: identities[$0.localID] ?? [])
    }
    if accounts.count > size, let last = accounts.prefix(size).last {
      response.nextPageToken = Base64URL.encode(Array(last.localID.utf8))
    }
    response.total = UInt64(max(0, total))
    return response
  }

  public func getAccount(_ request: GetAccountRequest, context: CallContext) async throws(RPCError)
    -> AccountInfo
  {
    let project = try existing(request.projectId, context)
    let (account, identities) = try await load(project.projectID, request.localId)
    return AccountInfo(account, identities: identities)
  }

  /// Disabled accounts cannot sign in, refresh or pass `check_revoked`; enabling again
  /// lets their refresh tokens work again (as Firebase does).
  public func disableAccount(_ request: DisableAccountRequest, context: CallContext) async throws(RPCError)
    -> AccountInfo
  {
    let project = try existing(request.projectId, context)
    let projectID = project.projectID
    let localID = request.localId
    let disabled = request.disabled
    let (account, identities) = try await updateAccount(projectID: projectID, localID: localID) {
      $0.disabled = disabled
    }
    env.logger.info(
      disabled ? "account disabled" : "account enabled",
      ["project_id": .string(projectID), "uid": .string(localID), "is_anon": .bool(account.isAnonymous)])
    return AccountInfo(account, identities: identities)
  }

  /// The most accounts, and rows (an account and its refresh sessions, at most
  /// `RefreshTokensRepository.maxSessionsPerAccount`), one write job of `DeleteAccounts`
  /// removes: the writes queued meanwhile (every project's) are committed between two
  /// jobs instead of after 1,000 accounts. Rows are what a deletion costs: a session's
  /// entries sit on pages of their own, 100 of them about 0.7 ms with the pages cached.
  static let deleteChunkAccounts = 16
  static let deleteChunkRows = 256

  /// Deletes up to 1000 accounts in write jobs of bounded size (`deleteChunkRows`);
  /// unknown ids are skipped and not counted. A store error stops the call with the
  /// jobs before it done (a retry with the same ids deletes the rest).
  public func deleteAccounts(_ request: DeleteAccountsRequest, context: CallContext) async throws(RPCError)
    -> DeleteAccountsResponse
  {
    let project = try existing(request.projectId, context)
    guard request.localIds.count <= 1000 else {
      throw RPCError(.invalidArgument, "at most 1000 local_ids per call")
    }
    let projectID = project.projectID
    let ids = request.localIds
    var deleted = 0
    var start = 0
    while start < ids.count {
      let rest = ids[start...]
      let job = try await env.write(Self.admitted) { db in
        try AccountsRepository.deleteBatch(
          db, projectID: projectID, localIDs: rest, maxAccounts: Self.deleteChunkAccounts,
          maxRows: Self.deleteChunkRows)
      }
      deleted += job.deleted
      start += max(1, job.handled)
    }
    env.metrics.accountsDeleted(Int64(deleted))
    env.logger.info("accounts deleted", ["project_id": .string(projectID), "deleted": .int(Int64(deleted))])
    var response = DeleteAccountsResponse()
    response.deleted = UInt64(deleted)
    return response
  }

  /// Revokes every refresh token and every ID token issued before now (`valid_since`
  /// moves to now), as Firebase's `revokeRefreshTokens`.
  public func revokeRefreshTokens(_ request: RevokeRefreshTokensRequest, context: CallContext)
    async throws(RPCError)
    -> RevokeRefreshTokensResponse
  {
    let project = try existing(request.projectId, context)
    let projectID = project.projectID
    let localID = request.localId
    let now = env.clock.nowSeconds()
    let found = try await env.write(Self.admitted) { db -> Bool in
      guard var account = try AccountsRepository.get(db, projectID: projectID, localID: localID) else {
        return false
      }
      account.validSince = max(account.validSince, now)
      try AccountsRepository.update(db, account)
      try RefreshTokensRepository.revokeAccount(db, projectID: projectID, localID: localID)
      return true
    }
    guard found else { throw RPCError(.userNotFound, "no such account") }
    return RevokeRefreshTokensResponse()
  }

  /// Custom claims: a JSON object of at most 1000 bytes with no reserved name; they
  /// appear in the account's next ID token. An empty string clears them.
  public func setCustomClaims(_ request: SetCustomClaimsRequest, context: CallContext) async throws(RPCError)
    -> AccountInfo
  {
    let project = try existing(request.projectId, context)
    let json = request.customClaimsJson
    try CustomClaimsPolicy.check(json)
    let (account, identities) = try await updateAccount(
      projectID: project.projectID, localID: request.localId
    ) {
      $0.customClaimsJSON = json
    }
    return AccountInfo(account, identities: identities)
  }

  /// Changes an account in one write job and returns it as stored, with its identities;
  /// `USER_NOT_FOUND` when the project has no such account.
  private func updateAccount(
    projectID: String, localID: String, _ change: @escaping @Sendable (inout AccountRecord) -> Void
  ) async throws(RPCError) -> (AccountRecord, [IdentityRecord]) {
    let updated = try await env.write(Self.admitted) { db -> (AccountRecord, [IdentityRecord])? in
      guard var account = try AccountsRepository.get(db, projectID: projectID, localID: localID) else {
        return nil
      }
      change(&account)
      try AccountsRepository.update(db, account)
      return (account, try AccountsRepository.identities(db, projectID: projectID, localID: localID))
    }
    guard let updated else { throw RPCError(.userNotFound, "no such account") }
    return updated
  }

  /// The local id a page token names (the last one of the previous page, base64url);
  /// "" for the first page.
  static func pageCursor(_ token: String) throws(RPCError) -> String {
    guard !token.isEmpty else { return "" }
    guard let bytes = Base64URL.decode(token), !bytes.isEmpty, bytes.count <= 128 else {
      throw RPCError(.invalidArgument, "page_token is not one this server gave")
    }
    return String(decoding: bytes, as: UTF8.self)
  }

  func load(_ projectID: String, _ localID: String) async throws(RPCError) -> (
    AccountRecord, [IdentityRecord]
  ) {
    let found = try await env.read { db -> (AccountRecord, [IdentityRecord])? in
      guard let account = try AccountsRepository.get(db, projectID: projectID, localID: localID) else {
        return nil
      }
      return (account, try AccountsRepository.identities(db, projectID: projectID, localID: localID))
    }
    guard let found else { throw RPCError(.userNotFound, "no such account") }
    return found
  }
}
