import AnonAuthRPCClient
import AnonAuthWire
import Foundation

/// `anonauth admin ...`: every AdminService method, with tables for lists, `--json`
/// everywhere, and a progress bar on long operations.
enum AdminCommand {
  static let summary = "AdminService: projects, keys, accounts, clean-up, usage, backup"
  static let help = """
    Usage: anonauth admin COMMAND [PROJECT_ID] [ARGS] [--admin-key-file FILE] [options]

    Commands:
      create-project PROJECT_ID [--anonymous] [--email-password]
                                              a new project with the methods named on
                                              (every sign-in method off otherwise)
      get-config [PROJECT_ID]                 the project's settings
      update-config [PROJECT_ID] FIELD=VALUE...
                                              change settings (update_mask = the fields named);
                                              idps=@FILE sets identity providers from a JSON array
                                              cors_origins=A,B the browser origins allowed (CORS)
      create-api-key [PROJECT_ID] | list-api-keys [PROJECT_ID] | revoke-api-key [PROJECT_ID] KEY
      schedule-quota [PROJECT_ID] --quota N --duration-seconds S [--start-ms T]
      list-accounts [PROJECT_ID] [--filter all|anonymous|permanent] [--page-size N]
                                [--page-token T] [--all]
      get-account [PROJECT_ID] UID            every field of the account
      disable-account [PROJECT_ID] UID [--enable]
      delete-accounts UID... | --file FILE    up to any number, 1000 per call, with progress
                                              (the project by --project only: any argument may be a UID)
      revoke-refresh-tokens [PROJECT_ID] UID
      set-custom-claims [PROJECT_ID] UID JSON
      preview-cleanup [PROJECT_ID]
      run-cleanup [PROJECT_ID] [--all-projects]
                                              deletes what is due now, with progress
      usage [PROJECT_ID]
      rotate-signing-key
      backup NAME                             an online copy into DATA_DIR/backups/NAME
      import-firebase [PROJECT_ID] FILE [--hash-config FILE] [--on-conflict skip|fail] [--dry-run]
                      [--check-password EMAIL [--password-stdin]]
                                              users from firebase auth:export (JSON or CSV),
                                              uids and password hashes kept, 1000 per call;
                                              --dry-run exits 1 when rows would be refused;
                                              --check-password checks the hash config on that
                                              account's row with its password (stdin or a
                                              prompt) before anything is sent
      export-firebase [PROJECT_ID] FILE       every account, hashes included, in the same JSON
      cluster [--remove ID]                   the replicated store's nodes, roles and leader;
                                              --remove takes a node that is gone for good out
      action-link [PROJECT_ID] TYPE EMAIL [--new-email E] [--continue-url URL] [--in-app]
                                              an email action's link, printed, not mailed; TYPE:
                                              password-reset, verify-email, verify-and-change-email,
                                              email-signin

    The project: every command that acts on one takes it as its first argument
    (PROJECT_ID) or as --project PROJECT_ID, else client.json's project_id. An argument or
    option a command does not take is refused, with what it expects. The admin key is read
    from a file, never from the command line (where `ps` would show it): --admin-key-file
    FILE, else the file named by ANONAUTH_ADMIN_KEY_FILE (the daemon's own setting, so it
    works inside the container), else DATA_DIR/client.json's admin_key (--dev). A key from
    --admin-key-file or ANONAUTH_ADMIN_KEY_FILE goes only to a daemon you name (--rpc,
    ANONAUTH_RPC, --data-dir or ANONAUTH_DATA_DIR), never to one a
    ./anonauth-data/client.json found in the current directory names.

    \(Connection.help)
    """

  static let switches: Set<String> = [
    "enable", "all", "all-projects", "anonymous", "email-password", "dry-run", "in-app",
  ]

  struct Context {
    let connection: Connection
    let project: String
    let metadata: [String: String]
    let arguments: Arguments

    /// AdminService's calls with the admin key, each failing as the CLI reports it.
    var admin: AdminServiceClient<AdminTransport> {
      AdminServiceClient(AdminTransport(client: connection.client, metadata: metadata))
    }

    /// The command's own arguments (`AdminShapes`: the project taken out).
    let rest: [String]

    var json: Bool { arguments.has("json") }
    func arg(_ index: Int, _ name: String) throws(CLIError) -> String {
      guard index < rest.count else {
        throw .usage("admin \(arguments.positionals.first ?? ""): expected \(name)")
      }
      return rest[index]
    }
  }

  static func run(_ arguments: Arguments) async throws(CLIError) {
    // The arguments are checked before anything is read or called: a mistake costs no
    // connection and no admin key (a stand-in default project, as client.json is not read
    // yet; the real one is resolved below).
    _ = try AdminShapes.resolve(arguments, defaultProject: "-")
    let connection = try Connection(arguments)
    let resolved = try AdminShapes.resolve(arguments, defaultProject: connection.file["project_id"])
    let command = resolved.command
    let project = resolved.project
    let adminKey = try AdminKey.read(connection)
    let c = Context(
      connection: connection, project: project, metadata: ["authorization": "Bearer \(adminKey)"],
      arguments: arguments, rest: resolved.rest)
    switch command {
    case "create-project":
      try await createProject(c)
    case "get-config":
      print(
        try await projectConfig(
          c, try await c.admin.getProjectConfig(GetProjectConfigRequest(projectId: project))))
    case "update-config":
      print(try await projectConfig(c, try await updateConfig(c)))
    case "create-api-key":
      let r: CreateApiKeyResponse = try await c.admin.createApiKey(CreateApiKeyRequest(projectId: project))
      out(c, ["api_key": .string(r.apiKey)], r.apiKey)
    case "list-api-keys":
      let r: ListApiKeysResponse = try await c.admin.listApiKeys(ListApiKeysRequest(projectId: project))
      out(c, ["api_keys": .array(r.apiKeys.map { .string($0) })], r.apiKeys.joined(separator: "\n"))
    case "revoke-api-key":
      let _: RevokeApiKeyResponse = try await c.admin.revokeApiKey(
        RevokeApiKeyRequest(projectId: project, apiKey: try c.arg(0, "KEY")))
      out(c, ["revoked": .bool(true)], "revoked")
    case "schedule-quota":
      try await scheduleQuota(c)
    case "list-accounts":
      try await listAccounts(c)
    case "get-account":
      let info: AccountInfo = try await c.admin.getAccount(
        GetAccountRequest(projectId: project, localId: try c.arg(0, "UID")))
      account(c, info)
    case "disable-account":
      let info: AccountInfo = try await c.admin.disableAccount(
        DisableAccountRequest(
          projectId: project, localId: try c.arg(0, "UID"), disabled: !arguments.has("enable")))
      account(c, info)
    case "delete-accounts":
      try await deleteAccounts(c)
    case "revoke-refresh-tokens":
      let _: RevokeRefreshTokensResponse = try await c.admin.revokeRefreshTokens(
        RevokeRefreshTokensRequest(projectId: project, localId: try c.arg(0, "UID")))
      out(c, ["revoked": .bool(true)], "revoked")
    case "set-custom-claims":
      let info: AccountInfo = try await c.admin.setCustomClaims(
        SetCustomClaimsRequest(
          projectId: project, localId: try c.arg(0, "UID"), customClaimsJson: try c.arg(1, "JSON")))
      account(c, info)
    case "preview-cleanup":
      let r: PreviewCleanupResponse = try await c.admin.previewCleanup(
        PreviewCleanupRequest(projectId: project))
      out(
        c,
        [
          "eligible_now": .int(Int64(r.eligibleNow)), "scheduled_total": .int(Int64(r.scheduledTotal)),
          "scheduled_next_30_days": .int(Int64(r.scheduledNext30Days)), "next_run_at_ms": .int(r.nextRunAtMs),
        ],
        "eligible now: \(r.eligibleNow)\nscheduled: \(r.scheduledTotal) (next 30 days: \(r.scheduledNext30Days))\n"
          + "next background run at: \(HumanTime.isoAndRelative(ms: r.nextRunAtMs))")
    case "run-cleanup":
      try await runCleanup(c)
    case "usage":
      try await usage(c)
    case "cluster":
      try await cluster(c)
    case "rotate-signing-key":
      let r: RotateSigningKeyResponse = try await c.admin.rotateSigningKey(RotateSigningKeyRequest())
      out(c, ["kid": .string(r.kid)], r.kid)
    case "import-firebase":
      try await FirebaseImportCommand.run(c)
    case "export-firebase":
      try await FirebaseExportCommand.run(c)
    case "action-link":
      try await actionLink(c)
    case "backup":
      let name = try c.arg(0, "NAME")
      let bar = ProgressBar(total: 1, label: "backup")
      bar.update(0)
      let r: BackupResponse = try await c.admin.backup(BackupRequest(name: name))
      bar.update(1)
      bar.finish()
      out(c, ["path": .string(r.path), "bytes": .int(Int64(r.bytes))], "\(r.path) (\(r.bytes) bytes)")
    default:
      throw .usage("admin: unknown command \"\(command)\" (see anonauth admin --help)")
    }
  }

  // MARK: Commands with more to them

  /// Creates the project and switches on the methods named, in one command.
  static func createProject(_ c: Context) async throws(CLIError) {
    let projectID = c.project
    var config: ProjectConfig = try await c.admin.createProject(CreateProjectRequest(projectId: projectID))
    var mask: [String] = []
    if c.arguments.has("anonymous") {
      config.anonymousEnabled = true
      mask.append(ProjectConfigField.anonymousEnabled.rawValue)
    }
    if c.arguments.has("email-password") {
      config.emailPasswordEnabled = true
      mask.append(ProjectConfigField.emailPasswordEnabled.rawValue)
    }
    if !mask.isEmpty {
      config = try await c.admin.updateProjectConfig(
        UpdateProjectConfigRequest(config: config, updateMask: mask))
    }
    print(c.json ? try await projectConfig(c, config) : config.projectId)
    FileHandle.standardError.write(Data((SignInMethodNotes.afterCreate(config) + "\n").utf8))
  }

  static func updateConfig(_ c: Context) async throws(CLIError) -> ProjectConfig {
    var config = ProjectConfig()
    config.projectId = c.project
    var mask: [String] = []
    for pair in c.rest {
      guard let eq = pair.firstIndex(of: "=") else {
        throw .usage("update-config: expected FIELD=VALUE, got \(pair)")
      }
      let field = String(pair[..<eq])
      let value = String(pair[pair.index(after: eq)...])
      func bool() throws(CLIError) -> Bool {
        guard let b = Bool(value) else { throw .usage("\(field): expected true or false") }
        return b
      }
      func number() throws(CLIError) -> UInt32 {
        guard let n = UInt32(value) else { throw .usage("\(field): expected a whole number") }
        return n
      }
      // A name the proto does not mark settable goes to the server as it is, which answers
      // INVALID_CONFIG naming it. The switch has no default: a field marked settable in
      // Protos/ does not compile here until this command can set it.
      if let known = ProjectConfigField(rawValue: field) {
        switch known {
        case .anonymousEnabled: config.anonymousEnabled = try bool()
        case .emailPasswordEnabled: config.emailPasswordEnabled = try bool()
        case .autoCleanupEnabled: config.autoCleanupEnabled = try bool()
        case .signUpQuotaPerHour: config.signUpQuotaPerHour = try number()
        case .idTokenTtlSeconds: config.idTokenTtlSeconds = try number()
        case .passwordMinLength: config.passwordMinLength = try number()
        case .idps: config.idps = try IdpFile.load(value)
        case .firebaseProjectId: config.firebaseProjectId = value
        case .firebaseCertsJson: config.firebaseCertsJson = value
        case .firebaseCertsUrl: config.firebaseCertsUrl = value
        case .firebaseCreateUnknownUsers: config.firebaseCreateUnknownUsers = try bool()
        case .corsOrigins:
          config.corsOrigins = value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        case .authorizedDomains:
          config.authorizedDomains = value.split(separator: ",").map {
            $0.trimmingCharacters(in: .whitespaces)
          }
        case .emailEnumerationProtectionDisabled: config.emailEnumerationProtectionDisabled = try bool()
        case .emailSender: config.emailSender = value
        case .emailAppName: config.emailAppName = value
        case .emailTemplates: config.emailTemplates = try EmailTemplateFile.load(value)
        }
      }
      mask.append(field)
    }
    guard !mask.isEmpty else { throw .usage("update-config: name at least one FIELD=VALUE") }
    return try await c.admin.updateProjectConfig(UpdateProjectConfigRequest(config: config, updateMask: mask))
  }

  static func scheduleQuota(_ c: Context) async throws(CLIError) {
    guard let quota = c.arguments["quota"].flatMap(UInt32.init),
      let duration = c.arguments["duration-seconds"].flatMap(Int64.init)
    else { throw .usage("schedule-quota: --quota N and --duration-seconds S are required") }
    var request = ScheduleSignUpQuotaRequest()
    request.projectId = c.project
    request.quota = quota
    request.durationSeconds = duration
    request.startTimeMs = c.arguments["start-ms"].flatMap(Int64.init) ?? 0
    let _: ScheduleSignUpQuotaResponse = try await c.admin.scheduleSignUpQuota(request)
    out(c, ["scheduled": .bool(true)], "scheduled quota \(quota) for \(duration) s")
  }

  static func listAccounts(_ c: Context) async throws(CLIError) {
    var request = ListAccountsRequest()
    request.projectId = c.project
    switch c.arguments["filter"] ?? "all" {
    case "all": request.filter = .all
    case "anonymous": request.filter = .anonymous
    case "permanent": request.filter = .permanent
    default: throw .usage("--filter: all, anonymous or permanent")
    }
    request.pageSize = c.arguments["page-size"].flatMap(UInt32.init) ?? 100
    request.pageToken = c.arguments["page-token"] ?? ""
    var accounts: [AccountInfo] = []
    var response: ListAccountsResponse
    repeat {
      response = try await c.admin.listAccounts(request)
      accounts += response.accounts
      request.pageToken = response.nextPageToken
    } while c.arguments.has("all") && !response.nextPageToken.isEmpty
    if c.json {
      print(
        JSONOut.object([
          "accounts": .array(accounts.map(accountJSON)), "next_page_token": .string(response.nextPageToken),
          "total": .int(Int64(response.total)),
        ]).text)
      return
    }
    print(
      Table.render(
        headers: ["UID", "KIND", "EMAIL", "PROVIDERS", "CREATED (UTC)", "DELETES AT (UTC)", "DISABLED"],
        rows: accounts.map {
          [
            $0.localId, $0.isAnonymous ? "anonymous" : "permanent", $0.email,
            $0.providers.map(\.providerId).joined(separator: ","), HumanTime.iso(ms: $0.createdAtMs),
            HumanTime.isoAndRelative(ms: $0.scheduledDeletionAtMs), $0.disabled ? "yes" : "",
          ]
        }))
    print(
      "\(accounts.count) of \(response.total)\(response.nextPageToken.isEmpty ? "" : "; next page: --page-token \(response.nextPageToken)")"
    )
  }

  static func deleteAccounts(_ c: Context) async throws(CLIError) {
    var ids = c.rest
    if let file = c.arguments["file"] {
      guard let text = try? String(contentsOfFile: file, encoding: .utf8) else {
        throw .usage("cannot read \(file)")
      }
      ids += text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.filter {
        !$0.isEmpty
      }
    }
    guard !ids.isEmpty else { throw .usage("delete-accounts: name UIDs or --file FILE") }
    let bar = ProgressBar(total: ids.count, label: "deleting")
    var deleted: UInt64 = 0
    var done = 0
    for chunk in stride(from: 0, to: ids.count, by: 1000).map({ Array(ids[$0..<min($0 + 1000, ids.count)]) })
    {
      let r: DeleteAccountsResponse = try await c.admin.deleteAccounts(
        DeleteAccountsRequest(projectId: c.project, localIds: chunk))
      deleted += r.deleted
      done += chunk.count
      bar.update(done)
    }
    bar.finish()
    out(c, ["deleted": .int(Int64(deleted))], "deleted \(deleted) of \(ids.count)")
  }

  static func runCleanup(_ c: Context) async throws(CLIError) {
    let project = c.project
    var total = 0
    if !project.isEmpty {
      let preview: PreviewCleanupResponse = try await c.admin.previewCleanup(
        PreviewCleanupRequest(projectId: project))
      total = Int(preview.eligibleNow)
    }
    let bar = ProgressBar(total: total, label: "cleaning up")
    var deleted: UInt64 = 0
    var request = RunCleanupRequest()
    request.projectId = project
    request.maxAccounts = 2000
    while true {
      let r: RunCleanupResponse = try await c.admin.runCleanup(request)
      deleted += r.deleted
      bar.update(Int(deleted))
      if r.deleted < UInt64(request.maxAccounts) { break }
    }
    bar.finish()
    out(c, ["deleted": .int(Int64(deleted))], "deleted \(deleted) anonymous accounts")
  }

  static func usage(_ c: Context) async throws(CLIError) {
    let r: GetUsageResponse = try await c.admin.getUsage(GetUsageRequest(projectId: c.project))
    if c.json {
      print(
        JSONOut.object([
          "total_accounts": .int(Int64(r.totalAccounts)),
          "anonymous_accounts": .int(Int64(r.anonymousAccounts)),
          "billable_accounts": .int(Int64(r.billableAccounts)),
          "cleaned_up_total": .int(Int64(r.cleanedUpTotal)),
          "sign_ups_by_day": .array(
            r.signUpsByDay.map { d in
              .object([
                "day": .string(d.day), "by_provider": .object(d.byProvider.mapValues { .int(Int64($0)) }),
              ])
            }),
        ]).text)
      return
    }
    print("accounts: \(r.totalAccounts) (anonymous \(r.anonymousAccounts), billable \(r.billableAccounts))")
    print("cleaned up: \(r.cleanedUpTotal)")
    print(
      Table.render(
        headers: ["DAY", "SIGN-UPS"],
        rows: r.signUpsByDay.map { d in
          [d.day, d.byProvider.keys.sorted().map { "\($0)=\(d.byProvider[$0] ?? 0)" }.joined(separator: " ")]
        }))
  }

  // MARK: Output

  static func projectConfig(_ c: Context, _ config: ProjectConfig) async throws(CLIError) -> String {
    var fields: [String: JSONOut] = [
      "project_id": .string(config.projectId),
      "auto_cleanup_enabled_at_ms": .int(config.autoCleanupEnabledAtMs),
    ]
    // Every settable field, by its proto name: no default, so that one marked settable in
    // Protos/ does not compile here until get-config shows it.
    for field in ProjectConfigField.allCases {
      switch field {
      case .anonymousEnabled: fields[field.rawValue] = .bool(config.anonymousEnabled)
      case .emailPasswordEnabled: fields[field.rawValue] = .bool(config.emailPasswordEnabled)
      case .autoCleanupEnabled: fields[field.rawValue] = .bool(config.autoCleanupEnabled)
      case .signUpQuotaPerHour: fields[field.rawValue] = .int(Int64(config.signUpQuotaPerHour))
      case .idTokenTtlSeconds: fields[field.rawValue] = .int(Int64(config.idTokenTtlSeconds))
      case .passwordMinLength: fields[field.rawValue] = .int(Int64(config.passwordMinLength))
      case .firebaseProjectId: fields[field.rawValue] = .string(config.firebaseProjectId)
      case .firebaseCertsJson: fields[field.rawValue] = .string(config.firebaseCertsJson)
      case .firebaseCertsUrl: fields[field.rawValue] = .string(config.firebaseCertsUrl)
      case .firebaseCreateUnknownUsers: fields[field.rawValue] = .bool(config.firebaseCreateUnknownUsers)
      case .corsOrigins: fields[field.rawValue] = .array(config.corsOrigins.map { .string($0) })
      case .authorizedDomains: fields[field.rawValue] = .array(config.authorizedDomains.map { .string($0) })
      case .emailEnumerationProtectionDisabled:
        fields[field.rawValue] = .bool(config.emailEnumerationProtectionDisabled)
      case .emailSender: fields[field.rawValue] = .string(config.emailSender)
      case .emailAppName: fields[field.rawValue] = .string(config.emailAppName)
      case .emailTemplates:
        fields[field.rawValue] = .array(
          config.emailTemplates.map {
            .object([
              "request_type": .string($0.requestType), "language": .string($0.language),
              "subject": .string($0.subject), "text": .string($0.text), "html": .string($0.html),
            ])
          })
      case .idps:
        fields[field.rawValue] = .array(
          config.idps.map { provider -> JSONOut in
            var idp: [String: JSONOut] = [
              "provider_id": .string(provider.providerId), "enabled": .bool(provider.enabled),
              "client_id": .string(provider.clientId),
              "issuer": .string(provider.issuer), "jwks_url": .string(provider.jwksUrl),
            ]
            if !provider.clientIds.isEmpty {
              idp["client_ids"] = .array(provider.clientIds.map { .string($0) })
            }
            if !provider.teamId.isEmpty { idp["team_id"] = .string(provider.teamId) }
            if !provider.keyId.isEmpty { idp["key_id"] = .string(provider.keyId) }
            return .object(idp)
          })
      }
    }
    let value = JSONOut.object(fields)
    return c.json ? value.text : value.pretty
  }

  /// With `--json`, the account as the wire has it; as text, with the times also in UTC
  /// ISO 8601 (and how soon a scheduled deletion comes).
  static func account(_ c: Context, _ info: AccountInfo) {
    guard !c.json else { return print(accountJSON(info).text) }
    guard case .object(var fields) = accountJSON(info) else { return }
    fields["created_at"] = .string(HumanTime.iso(ms: info.createdAtMs))
    fields["last_sign_in_at"] = .string(HumanTime.iso(ms: info.lastSignInAtMs))
    fields["scheduled_deletion_at"] = .string(HumanTime.isoAndRelative(ms: info.scheduledDeletionAtMs))
    print(JSONOut.object(fields).pretty)
  }

  /// Every field of the account, by its proto name (`AdminOutputTests` holds it to the
  /// message's fields); `providers` keeps the ids it always had, `provider_info` adds
  /// every field of each.
  static func accountJSON(_ info: AccountInfo) -> JSONOut {
    .object([
      "local_id": .string(info.localId), "is_anonymous": .bool(info.isAnonymous),
      "email": .string(info.email), "email_verified": .bool(info.emailVerified),
      "display_name": .string(info.displayName),
      "disabled": .bool(info.disabled), "created_at_ms": .int(info.createdAtMs),
      "last_sign_in_at_ms": .int(info.lastSignInAtMs), "last_refresh_at_ms": .int(info.lastRefreshAtMs),
      "valid_since": .int(info.validSince),
      "custom_claims_json": .string(info.customClaimsJson),
      "scheduled_deletion_at_ms": .int(info.scheduledDeletionAtMs),
      // The ids, as before; every field of each in provider_info.
      "providers": .array(info.providers.map { .string($0.providerId) }),
      "provider_info": .array(
        info.providers.map {
          .object([
            "provider_id": .string($0.providerId), "raw_id": .string($0.rawId), "email": .string($0.email),
            "display_name": .string($0.displayName),
          ])
        }),
    ])
  }

  /// `admin cluster`: the members as a table (or JSON), after an optional removal.
  static func cluster(_ c: Context) async throws(CLIError) {
    let r: DescribeClusterResponse
    if let text = c.arguments["remove"] {
      guard let id = UInt64(text), id > 0 else { throw .usage("admin cluster --remove: expected a node id") }
      r = try await c.admin.removeClusterNode(RemoveClusterNodeRequest(id: id))
    } else {
      r = try await c.admin.describeCluster(DescribeClusterRequest())
    }
    let nodes: [JSONOut] = r.nodes.map { node in
      .object([
        "id": .int(Int64(node.id)), "address": .string(node.address), "role": .string(node.role),
        "leader": .bool(node.leader),
      ])
    }
    let table = Table.render(
      headers: ["ID", "ADDRESS", "ROLE", "LEADER"],
      rows: r.nodes.map { ["\($0.id)", $0.address, $0.role, $0.leader ? "yes" : ""] })
    out(
      c,
      [
        "engine": .string(r.engine), "node_id": .int(Int64(r.nodeId)), "leader_id": .int(Int64(r.leaderId)),
        "nodes": .array(nodes),
      ],
      table + "\nanswered by node \(r.nodeId)")
  }

  static func out(_ c: Context, _ fields: [String: JSONOut], _ text: String) {
    print(c.json ? JSONOut.object(fields).text : text)
  }
}
