import AnonAuthCrypto
import AnonAuthWire

extension FirebaseAPI {
  /// Firebase's `GET accounts:batchGet` (`list_users`): `maxResults` and
  /// `nextPageToken` in the query; native `ExportAccounts` pages, which carry the photo
  /// URLs (the hashes they also carry are never sent here).
  public static func adminBatchGet(_ call: Call) async throws(FirebaseError) -> JSONValue {
    var request = ExportAccountsRequest()
    request.projectId = adminProject(call)
    if let text = call.query["maxResults"] {
      guard let size = UInt32(text) else {
        throw FirebaseError.invalidValue("maxResults", expected: "TYPE_INT32")
      }
      request.pageSize = size
    }
    request.pageToken = call.query["nextPageToken"] ?? ""
    let page = try await call.native(AdminServiceMethods.exportAccounts, request)
    var out: [String: JSONValue] = ["kind": "identitytoolkit#DownloadAccountResponse"]
    let users = page.accounts.compactMap { exported in
      exported.account.map { adminUser($0, photoURL: exported.photoUrl) }
    }
    if !users.isEmpty { out["users"] = .array(users) }
    if !page.nextPageToken.isEmpty { out["nextPageToken"] = .string(page.nextPageToken) }
    return .object(out)
  }

  /// What Firebase answers for an enabled account in a batch delete without `force`.
  static let notDisabled = "NOT_DISABLED : Disable the account before batch deletion."

  /// Firebase's `accounts:batchDelete` (`delete_users`): up to 1000 `localIds`, unknown
  /// ones counted as deleted. Without `force`, enabled accounts are not deleted and are
  /// reported in `errors` (`index`, `localId`, `message`), as Firebase does.
  public static func adminBatchDelete(_ call: Call) async throws(FirebaseError) -> JSONValue {
    let project = adminProject(call)
    let localIDs = try call.strings("localIds")
    guard localIDs.count <= 1000 else {
      throw FirebaseError(RPCError(.invalidArgument, "at most 1000 localIds per call"))
    }
    var refused: [JSONValue] = []
    var deletable = localIDs
    if !(try call.bool("force")) && !localIDs.isEmpty {
      var enabled = Set<String>()
      var start = 0
      while start < localIDs.count {
        var lookup = LookupAccountsRequest()
        lookup.projectId = project
        lookup.localIds = Array(localIDs[start..<min(localIDs.count, start + 100)])
        let found = try await call.native(AdminServiceMethods.lookupAccounts, lookup)
        for account in found.accounts where !account.disabled { enabled.insert(account.localId) }
        start += 100
      }
      deletable = []
      for (index, localID) in localIDs.enumerated() {
        if enabled.contains(localID) {
          refused.append([
            "index": .int(Int64(index)), "localId": .string(localID), "message": .string(notDisabled),
          ])
        } else {
          deletable.append(localID)
        }
      }
    }
    if !deletable.isEmpty || localIDs.isEmpty {
      var request = DeleteAccountsRequest()
      request.projectId = project
      request.localIds = deletable
      _ = try await call.native(AdminServiceMethods.deleteAccounts, request)
    }
    var out: [String: JSONValue] = ["kind": "identitytoolkit#BatchDeleteAccountsResponse"]
    if !refused.isEmpty { out["errors"] = .array(refused) }
    return .object(out)
  }

  /// Firebase's `accounts:batchCreate` (`import_users`): `users` in Firebase's export
  /// shape and the hash options (`hashAlgorithm`, `signerKey`, `saltSeparator`, `rounds`,
  /// `memoryCost`, `passwordHashOrder`) onto native `ImportAccounts`. A uid that exists
  /// already is a row error (Firebase would overwrite the account; AnonAuth never
  /// overwrites one silently). Row errors come back as Firebase's `error: [{index, message}]`.
  public static func adminBatchCreate(_ call: Call) async throws(FirebaseError) -> JSONValue {
    guard case .array(let users)? = call.body["users"] else {
      throw FirebaseError(status: 400, message: "MISSING_USER_ACCOUNT : users is missing")
    }
    var request = ImportAccountsRequest()
    request.projectId = adminProject(call)
    request.onConflict = .fail
    request.hashConfig = try AdminImportJSON.hashConfig(call)
    var errors: [(index: Int, message: String)] = []
    var sentIndex: [Int] = []
    for (index, user) in users.enumerated() {
      do throws(AdminImportJSON.RowRefusal) {
        request.accounts.append(try AdminImportJSON.account(user))
        sentIndex.append(index)
      } catch {
        errors.append((index, error.message))
      }
    }
    if request.accounts.isEmpty {
      // Nothing to import, but the answer still needs the admin key and the project:
      // a caller without them gets the 401 or 404 every admin call gives.
      var check = GetProjectConfigRequest()
      check.projectId = request.projectId
      _ = try await call.native(AdminServiceMethods.getProjectConfig, check)
    } else {
      let response = try await call.native(AdminServiceMethods.importAccounts, request)
      for rowError in response.errors {
        guard let row = Int(exactly: rowError.index), row < sentIndex.count else { continue }
        errors.append((sentIndex[row], "\(rowError.reason) : \(rowError.message)"))
      }
    }
    var out: [String: JSONValue] = ["kind": "identitytoolkit#UploadAccountResponse"]
    if !errors.isEmpty {
      out["error"] = .array(
        errors.sorted { $0.index < $1.index }.map {
          ["index": .int(Int64($0.index)), "message": .string($0.message)]
        })
    }
    return .object(out)
  }
}
