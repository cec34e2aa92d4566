import AnonAuthCrypto
import AnonAuthRPCClient
import AnonAuthWire

/// Benches of the admin service's hot read: paging through a project's accounts.
enum AdminBenches {
  /// `bench list-accounts`: every call in flight walks the accounts from a place of its
  /// own (a page token made from a uid prefix), page after page, as an export or an admin
  /// console does; at the end it starts again from the beginning.
  static func listAccounts(_ arguments: Arguments) async throws(CLIError) {
    let base = try Connection(arguments)
    let keys = try BenchCommand.Keys(arguments, base)
    let projectID = base.file["project_id"] ?? arguments["project"] ?? "demo-project"
    let pageSize = try BenchCommand.int(arguments, "page-size", 100)
    let filter: AccountFilter
    switch arguments["filter"] ?? "all" {
    case "all": filter = .all
    case "anonymous": filter = .anonymous
    case "permanent": filter = .permanent
    default: throw .usage("--filter expects all, anonymous or permanent")
    }
    let connections = try BenchCommand.int(arguments, "connections", 64)
    let concurrency = try BenchCommand.int(arguments, "concurrency", 4)
    let cursors = Lender(startingCursors(count: connections * concurrency))
    let metadata = ["authorization": "Bearer \(keys.adminKey)"]
    try await BenchCommand.measure(arguments, name: "list-accounts", defaultConcurrency: 4) {
      guard let cursor = cursors.borrow() else { return nil }
      var request = ListAccountsRequest()
      request.projectId = projectID
      request.filter = filter
      request.pageSize = UInt32(clamping: pageSize)
      request.pageToken = cursor
      return BenchCall(
        method: AdminServiceMethods.listAccounts.path, payload: request.serializedBytes(),
        metadata: metadata,
        onSuccess: { bytes in
          cursors.giveBack((try? ListAccountsResponse(serializedBytes: bytes))?.nextPageToken ?? "")
        },
        onFailure: { cursors.giveBack(cursor) })
    }
  }

  /// Where each of `count` walks starts, spread over the uid space: uids are
  /// [A-Za-z0-9], so a page token made from a two-character prefix starts a walk there.
  static func startingCursors(count: Int) -> [String] {
    let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".utf8)
    return (0..<count).map { n in
      Base64URL.encode([alphabet[(n * 62 / max(1, count)) % 62], alphabet[(n * 17) % 62]])
    }
  }
}
