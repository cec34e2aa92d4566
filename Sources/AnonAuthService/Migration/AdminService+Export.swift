import AnonAuthCrypto
import AnonAuthStore
import AnonAuthWire

/// `AdminService/ExportAccounts`: pages of accounts in the shape `ImportAccounts` takes,
/// password hashes included, so nobody is locked in: an export of an import gives back the
/// same users. Keyset pages on the uid, like `ListAccounts`.
extension AdminService {
  public func exportAccounts(_ request: ExportAccountsRequest, context: CallContext) async throws(RPCError)
    -> ExportAccountsResponse
  {
    let project = try existing(request.projectId, context)
    guard request.pageSize <= Self.maxPageSize else {
      throw RPCError(.invalidArgument, "page_size must be at most \(Self.maxPageSize)")
    }
    let size = Int(request.pageSize == 0 ? 500 : request.pageSize)
    let after = try Self.pageCursor(request.pageToken)
    let projectID = project.projectID
    let cursor = after
    let (accounts, identities) = try await env.read { db in
      let page = try AccountListRepository.page(
        db, projectID: projectID, filter: .all, afterLocalID: cursor, limit: size + 1)
      let ids = try AccountListRepository.identities(
        db, projectID: projectID, localIDs: page.prefix(size).map(\.localID))
      return (page, ids)
    }
    var response = ExportAccountsResponse()
    response.accounts = accounts.prefix(size).map { account in
      let linked = identities[account.localID] ?? []
      var exported = ExportedAccount(
        account: AccountInfo(account, identities: linked), photoUrl: account.photoURL,
        providerPhotoUrls: linked.map(\.photoURL))
      if let stored = account.passwordHash {
        if let imported = ImportedPasswordHash(stored: stored) {
          // Still the hash Firebase made: valid with the original project's hash config.
          exported.firebasePasswordHash = imported.hash
          exported.firebaseSalt = imported.salt
        } else {
          exported.anonauthPasswordHash = stored
        }
      }
      return exported
    }
    if accounts.count > size, let last = accounts.prefix(size).last {
      response.nextPageToken = Base64URL.encode(Array(last.localID.utf8))
    }
    return response
  }
}
