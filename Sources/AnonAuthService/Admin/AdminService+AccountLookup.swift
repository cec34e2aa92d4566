import AnonAuthStore
import AnonAuthWire

/// AdminService: accounts by uid and by email at once, as Firebase's Admin SDK asks for
/// them (`get_user`, `get_user_by_email`, `get_users` all call `accounts:lookup`).
extension AdminService {
  /// Firebase's limit on the identifiers of one lookup.
  static let maxLookupIdentifiers = 100

  /// The accounts found, in the order asked, each once; unknown uids and emails are left
  /// out (an email that is not a valid address cannot name an account, so it is unknown).
  public func lookupAccounts(_ request: LookupAccountsRequest, context: CallContext) async throws(RPCError)
    -> LookupAccountsResponse
  {
    let project = try existing(request.projectId, context)
    guard request.localIds.count + request.emails.count <= Self.maxLookupIdentifiers else {
      throw RPCError(.invalidArgument, "at most \(Self.maxLookupIdentifiers) local_ids and emails together")
    }
    let projectID = project.projectID
    let localIDs = request.localIds
    let emails = request.emails.compactMap(EmailAddress.normalize)
    let found = try await env.read { db -> [(AccountRecord, [IdentityRecord])] in
      var seen = Set<String>()
      var out: [(AccountRecord, [IdentityRecord])] = []
      var accounts: [AccountRecord] = []
      for localID in localIDs {
        if let account = try AccountsRepository.get(db, projectID: projectID, localID: localID) {
          accounts.append(account)
        }
      }
      for email in emails {
        if let account = try AccountsRepository.byEmail(db, projectID: projectID, email: email) {
          accounts.append(account)
        }
      }
      for account in accounts where seen.insert(account.localID).inserted {
        out.append(
          (account, try AccountsRepository.identities(db, projectID: projectID, localID: account.localID)))
      }
      return out
    }
    var response = LookupAccountsResponse()
    response.accounts = found.map { AccountInfo($0.0, identities: $0.1) }
    response.photoUrls = found.map { $0.0.photoURL }
    return response
  }
}
