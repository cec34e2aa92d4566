import AnonAuthStore
import AnonAuthWire
import Foundation

/// AdminService: clean-up, usage and backups.
extension AdminService {
  public func previewCleanup(_ request: PreviewCleanupRequest, context: CallContext) async throws(RPCError)
    -> PreviewCleanupResponse
  {
    let project = try existing(request.projectId, context)
    let projectID = project.projectID
    let now = env.clock.nowMs()
    let counts = try await env.read { db in
      try CleanupRepository.preview(db, projectID: projectID, nowMs: now)
    }
    var response = PreviewCleanupResponse()
    response.eligibleNow = UInt64(counts.eligibleNow)
    response.scheduledTotal = UInt64(counts.scheduledTotal)
    response.scheduledNext30Days = UInt64(counts.scheduledNext30Days)
    response.nextRunAtMs = cleanup.nextRunAtMs
    return response
  }

  public func runCleanup(_ request: RunCleanupRequest, context: CallContext) async throws(RPCError)
    -> RunCleanupResponse
  {
    let projectID = request.projectId.isEmpty ? nil : try existing(request.projectId, context).projectID
    var response = RunCleanupResponse()
    response.deleted = UInt64(
      try await cleanup.runPass(
        projectID: projectID, maxAccounts: Int(request.maxAccounts), trigger: "RunCleanup"))
    return response
  }

  /// Accounts now, what is billable (anonymous accounts are not while clean-up is on),
  /// sign-ups per provider per day for the last 30 days, and accounts cleaned up.
  public func getUsage(_ request: GetUsageRequest, context: CallContext) async throws(RPCError)
    -> GetUsageResponse
  {
    let project = try existing(request.projectId, context)
    let projectID = project.projectID
    let since = UTCDay.string(ms: env.clock.nowMs() - 29 * 86_400_000)
    let (total, anonymous, cleaned, days) = try await env.read { db in
      (
        try AccountListRepository.count(db, projectID: projectID, filter: .all),
        try AccountListRepository.count(db, projectID: projectID, filter: .anonymous),
        try CleanupRepository.cleanedUpTotal(db, projectID: projectID),
        try AccountListRepository.signUpsByDay(db, projectID: projectID, sinceDay: since)
      )
    }
    var response = GetUsageResponse()
    response.totalAccounts = UInt64(total)
    response.anonymousAccounts = UInt64(anonymous)
    response.billableAccounts = UInt64(project.autoCleanupEnabled ? total - anonymous : total)
    response.cleanedUpTotal = UInt64(cleaned)
    var byDay: [String: [String: UInt64]] = [:]
    for entry in days { byDay[entry.day, default: [:]][entry.provider] = UInt64(entry.count) }
    response.signUpsByDay = byDay.keys.sorted().map { day in
      var daily = DailySignUps()
      daily.day = day
      daily.byProvider = byDay[day] ?? [:]
      return daily
    }
    return response
  }

  /// An online, consistent copy of the store into `DATA_DIR/backups/<name>`.
  public func backup(_ request: BackupRequest, context: CallContext) async throws(RPCError) -> BackupResponse
  {
    let name = request.name
    guard !name.isEmpty, name.utf8.count <= 128, !name.contains("/"), !name.contains("\0"), name != ".",
      name != ".."
    else { throw RPCError(.invalidArgument, "name must be a file name: no slashes, at most 128 bytes") }
    let path = backupDirectory + "/" + name
    do {
      try FileManager.default.createDirectory(
        atPath: backupDirectory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    } catch {
      throw RPCError(.internalError, "cannot create the backups directory")
    }
    if FileManager.default.fileExists(atPath: path) {
      throw RPCError(.backupExists, "a backup named \"\(name)\" exists")
    }
    let bytes: UInt64
    do {
      bytes = try await env.store.backup(to: path)
    } catch {
      env.logger.error("backup failed", ["error": .string("\(error)")])
      throw RPCError(.internalError, "the backup failed")
    }
    env.logger.info("backup written", ["path": .string(path), "bytes": .int(Int64(bytes))])
    var response = BackupResponse()
    response.path = path
    response.bytes = bytes
    return response
  }
}
