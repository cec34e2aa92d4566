import AnonAuthWire
import Foundation

/// `anonauth admin export-firebase FILE`: every account of the project in the JSON shape
/// `firebase auth:export` writes (and `import-firebase` reads), streamed page by page to
/// the file with a progress bar. Hashes Firebase made are written as `passwordHash` and
/// `salt`; AnonAuth's own as `anonauthPasswordHash`, which only AnonAuth reads.
enum FirebaseExportCommand {
  static func run(_ c: AdminCommand.Context) async throws(CLIError) {
    let path = try c.arg(0, "FILE")
    guard FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600]),
      let handle = FileHandle(forWritingAtPath: path)
    else { throw .usage("cannot write \(path)") }
    defer { try? handle.close() }
    let counted: ListAccountsResponse = try await c.admin.listAccounts(
      ListAccountsRequest(projectId: c.project, pageSize: 1))
    let bar = ProgressBar(total: Int(counted.total), label: "exporting")
    var written = 0
    var token = ""
    var failed = false
    handle.write(Data("{\"users\": [\n".utf8))
    repeat {
      let page: ExportAccountsResponse = try await c.admin.exportAccounts(
        ExportAccountsRequest(projectId: c.project, pageSize: 1000, pageToken: token))
      for exported in page.accounts {
        guard let json = try? JSONSerialization.data(withJSONObject: user(exported), options: [.sortedKeys])
        else {
          failed = true
          continue
        }
        handle.write(Data((written == 0 ? "" : ",\n").utf8) + json)
        written += 1
      }
      bar.update(min(written, Int(counted.total)))
      token = page.nextPageToken
    } while !token.isEmpty
    handle.write(Data("\n]}\n".utf8))
    bar.finish()
    if failed { throw .failed("some accounts could not be written as JSON") }
    AdminCommand.out(
      c, ["exported": .int(Int64(written)), "file": .string(path)], "exported \(written) to \(path)")
  }

  static func user(_ e: ExportedAccount) -> [String: Any] {
    let a = e.account ?? AccountInfo()
    var user: [String: Any] = [
      "localId": a.localId, "emailVerified": a.emailVerified, "disabled": a.disabled,
      "createdAt": String(a.createdAtMs), "lastSignedInAt": String(a.lastSignInAtMs),
    ]
    if !a.email.isEmpty { user["email"] = a.email }
    if !a.displayName.isEmpty { user["displayName"] = a.displayName }
    if !e.photoUrl.isEmpty { user["photoUrl"] = e.photoUrl }
    if !a.customClaimsJson.isEmpty { user["customAttributes"] = a.customClaimsJson }
    if !e.firebasePasswordHash.isEmpty {
      user["passwordHash"] = Data(e.firebasePasswordHash).base64EncodedString()
      user["salt"] = Data(e.firebaseSalt).base64EncodedString()
    }
    if !e.anonauthPasswordHash.isEmpty { user["anonauthPasswordHash"] = e.anonauthPasswordHash }
    var providers: [[String: Any]] = []
    // Firebase lists the password credential as a provider. The service lists it too when
    // the account has its identity (sign-up, link, import); added here only for an account
    // imported before imports stored it, never twice.
    if !a.email.isEmpty && (!e.firebasePasswordHash.isEmpty || !e.anonauthPasswordHash.isEmpty)
      && !a.providers.contains(where: { $0.providerId == "password" })
    {
      providers.append(["providerId": "password", "rawId": a.email, "email": a.email])
    }
    for (n, p) in a.providers.enumerated() {
      var entry: [String: Any] = ["providerId": p.providerId, "rawId": p.rawId]
      if !p.email.isEmpty { entry["email"] = p.email }
      if !p.displayName.isEmpty { entry["displayName"] = p.displayName }
      if n < e.providerPhotoUrls.count && !e.providerPhotoUrls[n].isEmpty {
        entry["photoUrl"] = e.providerPhotoUrls[n]
      }
      providers.append(entry)
    }
    if !providers.isEmpty { user["providerUserInfo"] = providers }
    return user
  }
}
