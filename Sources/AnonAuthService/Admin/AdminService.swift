import AnonAuthStore
import AnonAuthWire

/// `AdminService`, the parts the accounts-and-tokens worker needs: projects and their
/// settings, API keys, scheduled sign-up quotas, signing-key rotation. Every call needs
/// `authorization: Bearer <admin key>`.
public struct AdminService: AdminServiceHandler {
  public static let name = AdminServiceMethods.serviceName
  let env: ServiceEnvironment
  let cleanup: CleanupWorker
  /// Where `Backup` writes: `DATA_DIR/backups`.
  let backupDirectory: String
  /// What answers `DescribeCluster` and `RemoveClusterNode`: the server, which knows the
  /// replicated store; nil where nothing does (the service's own tests).
  let cluster: (any ClusterAdministration)?
  /// Admin calls are authenticated by an admin key and paced by nothing per end user:
  /// their hashing and writes run as named internal work.
  static let admitted = Admitted.internalWork(.adminCall)

  public init(
    environment: ServiceEnvironment, cleanup: CleanupWorker, backupDirectory: String,
    cluster: (any ClusterAdministration)? = nil
  ) {
    env = environment
    self.cleanup = cleanup
    self.backupDirectory = backupDirectory
    self.cluster = cluster
  }

  public func authenticate(_ context: CallContext) throws(RPCError) {
    guard env.callerIsAdmin(context) else {
      throw RPCError(.adminKeyInvalid, "authorization: Bearer <admin key> is missing or wrong")
    }
    if env.adminRequiresClientCertificate && context.clientCertificateName == nil {
      throw RPCError(
        .clientCertificateRequired, "AdminService needs a client certificate from the configured client CAs")
    }
  }

  /// The project an admin request names, also reported for the call's log line.
  func existing(_ projectID: String, _ context: CallContext) throws(RPCError) -> ProjectRecord {
    guard let project = env.directory.project(projectID) else {
      throw RPCError(.projectNotFound, "no project \"\(projectID)\"")
    }
    context.log.setProject(project.projectID)
    return project
  }

  public func createProject(_ request: CreateProjectRequest, context: CallContext) async throws(RPCError)
    -> ProjectConfig
  {
    guard ProjectConfigMapping.validProjectID(request.projectId) else {
      throw RPCError(.invalidConfig, "project_id must be 4 to 30 of [a-z0-9-], starting with a letter")
    }
    if env.directory.project(request.projectId) != nil {
      throw RPCError(.projectExists, "project \"\(request.projectId)\" exists")
    }
    do {
      let record = try await env.directory.createProject(request.projectId)
      context.log.setProject(record.projectID)
      return ProjectConfigMapping.config(record, masterKey: env.masterKey)
    } catch {
      // Two concurrent creates: the store's primary key decides.
      if env.directory.project(request.projectId) != nil {
        throw RPCError(.projectExists, "project \"\(request.projectId)\" exists")
      }
      throw env.storeFailure(error, "admin: store failed")
    }
  }

  public func getProjectConfig(_ request: GetProjectConfigRequest, context: CallContext) throws(RPCError)
    -> ProjectConfig
  {
    ProjectConfigMapping.config(try existing(request.projectId, context), masterKey: env.masterKey)
  }

  public func updateProjectConfig(_ request: UpdateProjectConfigRequest, context: CallContext)
    async throws(RPCError)
    -> ProjectConfig
  {
    guard let config = request.config else { throw RPCError(.invalidConfig, "config is missing") }
    _ = try existing(config.projectId, context)
    let mask = request.updateMask
    let nowMs = env.clock.nowMs()
    let masterKey = env.masterKey
    let changed: (before: ProjectRecord, after: ProjectRecord)?
    do {
      changed = try await env.directory.update(config.projectId) { current in
        try ProjectConfigMapping.apply(config, mask: mask, to: current, nowMs: nowMs, masterKey: masterKey)
      }
    } catch let error as RPCError {
      throw error
    } catch {
      throw env.storeFailure(error, "admin: store failed")
    }
    guard let (current, next) = changed else {
      throw RPCError(.projectNotFound, "no project \"\(config.projectId)\"")
    }
    if next.autoCleanupEnabled && !current.autoCleanupEnabled {
      // Accounts that existed when clean-up was turned on: max(created, enabled) + 30 days.
      _ = try await cleanup.scheduleExisting(
        projectID: next.projectID, enabledAtMs: next.autoCleanupEnabledAtMs)
    }
    return ProjectConfigMapping.config(next, masterKey: env.masterKey)
  }

  public func createApiKey(_ request: CreateApiKeyRequest, context: CallContext) async throws(RPCError)
    -> CreateApiKeyResponse
  {
    _ = try existing(request.projectId, context)
    var response = CreateApiKeyResponse()
    do {
      response.apiKey = try await env.directory.createAPIKey(projectID: request.projectId)
    } catch {
      throw env.storeFailure(error, "admin: store failed")
    }
    return response
  }

  public func listApiKeys(_ request: ListApiKeysRequest, context: CallContext) throws(RPCError)
    -> ListApiKeysResponse
  {
    _ = try existing(request.projectId, context)
    var response = ListApiKeysResponse()
    response.apiKeys = env.directory.apiKeys(projectID: request.projectId)
    return response
  }

  public func revokeApiKey(_ request: RevokeApiKeyRequest, context: CallContext) async throws(RPCError)
    -> RevokeApiKeyResponse
  {
    _ = try existing(request.projectId, context)
    let removed: Bool
    do {
      removed = try await env.directory.revokeAPIKey(projectID: request.projectId, apiKey: request.apiKey)
    } catch {
      throw env.storeFailure(error, "admin: store failed")
    }
    guard removed else { throw RPCError(.apiKeyInvalid, "no such API key in this project") }
    return RevokeApiKeyResponse()
  }

  /// The latest `start_time_ms` accepted: 9999-12-31T23:59:59.999Z. A bound well inside
  /// Int64, so that start + duration cannot overflow.
  static let latestStartTimeMs: Int64 = 253_402_300_799_999

  /// A temporary quota that replaces the project's from its start for its duration.
  public func scheduleSignUpQuota(_ request: ScheduleSignUpQuotaRequest, context: CallContext)
    async throws(RPCError)
    -> ScheduleSignUpQuotaResponse
  {
    let project = try existing(request.projectId, context)
    guard request.quota >= 1, request.quota <= 1_000_000 else {
      throw RPCError(.invalidArgument, "quota must be 1...1000000 (to stop sign-ups, switch the method off)")
    }
    guard request.durationSeconds >= 1, request.durationSeconds <= 366 * 86_400 else {
      throw RPCError(.invalidArgument, "duration_seconds must be 1 second to 366 days")
    }
    let start = request.startTimeMs == 0 ? env.clock.nowMs() : request.startTimeMs
    guard start > 0, start <= Self.latestStartTimeMs else {
      throw RPCError(.invalidArgument, "start_time_ms must be 0 (now) or a Unix time in ms up to year 9999")
    }
    // Both bounded above, so this cannot overflow; checked all the same.
    let (end, overflow) = start.addingReportingOverflow(request.durationSeconds * 1000)
    guard !overflow else { throw RPCError(.invalidArgument, "start_time_ms + duration_seconds is too late") }
    let quota = Int64(request.quota)
    try await env.write(Self.admitted) { db in
      try QuotaRepository.schedule(db, projectID: project.projectID, quota: quota, startMs: start, endMs: end)
    }
    return ScheduleSignUpQuotaResponse()
  }

  public func rotateSigningKey(_ request: RotateSigningKeyRequest, context: CallContext)
    async throws(RPCError)
    -> RotateSigningKeyResponse
  {
    var response = RotateSigningKeyResponse()
    do {
      response.kid = try await env.minter.rotate()
    } catch {
      throw env.storeFailure(error, "key rotation failed")
    }
    env.logger.info("signing key rotated", ["kid": .string(response.kid)])
    return response
  }
}
