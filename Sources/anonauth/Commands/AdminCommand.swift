import AnonAuthClient
import AnonAuthWire
import Foundation

/// `anonauth admin`: the AdminService calls an operator needs to set a deployment up and
/// keep it running (a project, its API key, signing-key rotation). The admin key is read
/// from a file, never from the command line, where `ps` would show it.
enum AdminCommand {
  static let summary = "set up projects and API keys, rotate the signing key (AdminService)"
  static let help = """
    Usage: anonauth admin SUBCOMMAND [options]

    Subcommands:
      create-project PROJECT_ID [--anonymous] [--email-password]
                            creates a project (every sign-in method off) and switches on
                            the methods named; prints the project id
      create-api-key PROJECT_ID
                            makes an API key for the project and prints it
      rotate-signing-key    makes a new active signing key; prints its key id

    The admin key comes from --admin-key-file FILE, else the file named by
    ANONAUTH_ADMIN_KEY_FILE (the daemon's own setting, so it works inside the container),
    else DATA_DIR/client.json (--dev).

    \(Connection.help)
    """

  static func run(_ arguments: Arguments) async throws(CLIError) {
    guard let subcommand = arguments.positionals.first else {
      throw .usage("admin: expected a subcommand (see anonauth admin --help)")
    }
    let operands = Array(arguments.positionals.dropFirst())
    switch subcommand {
    case "create-project":
      guard operands.count == 1 else { throw .usage("admin create-project: expected a PROJECT_ID") }
      try await createProject(operands[0], arguments)
    case "create-api-key":
      guard operands.count == 1 else { throw .usage("admin create-api-key: expected a PROJECT_ID") }
      try await createAPIKey(operands[0], arguments)
    case "rotate-signing-key":
      guard operands.isEmpty else { throw .usage("admin rotate-signing-key: takes no operand") }
      try await rotateSigningKey(arguments)
    default:
      throw .usage("admin: unknown subcommand \"\(subcommand)\" (see anonauth admin --help)")
    }
  }

  static func createProject(_ projectID: String, _ arguments: Arguments) async throws(CLIError) {
    let (connection, metadata) = try connect(arguments)
    var create = CreateProjectRequest()
    create.projectId = projectID
    var config = try await call(
      connection, "CreateProject", create, metadata: metadata, as: ProjectConfig.self)
    var mask: [String] = []
    if arguments.has("anonymous") {
      config.anonymousEnabled = true
      mask.append("anonymous_enabled")
    }
    if arguments.has("email-password") {
      config.emailPasswordEnabled = true
      mask.append("email_password_enabled")
    }
    if !mask.isEmpty {
      var update = UpdateProjectConfigRequest()
      update.config = config
      update.updateMask = mask
      config = try await call(
        connection, "UpdateProjectConfig", update, metadata: metadata, as: ProjectConfig.self)
    }
    SessionCommands.output(
      arguments,
      [
        "project_id": config.projectId, "anonymous_enabled": "\(config.anonymousEnabled)",
        "email_password_enabled": "\(config.emailPasswordEnabled)",
      ], text: config.projectId)
  }

  static func createAPIKey(_ projectID: String, _ arguments: Arguments) async throws(CLIError) {
    let (connection, metadata) = try connect(arguments)
    var request = CreateApiKeyRequest()
    request.projectId = projectID
    let response = try await call(
      connection, "CreateApiKey", request, metadata: metadata, as: CreateApiKeyResponse.self)
    SessionCommands.output(arguments, ["api_key": response.apiKey], text: response.apiKey)
  }

  static func rotateSigningKey(_ arguments: Arguments) async throws(CLIError) {
    let (connection, metadata) = try connect(arguments)
    let response = try await call(
      connection, "RotateSigningKey", RotateSigningKeyRequest(), metadata: metadata,
      as: RotateSigningKeyResponse.self)
    SessionCommands.output(arguments, ["kid": response.kid], text: response.kid)
  }

  private static func connect(_ arguments: Arguments) throws(CLIError) -> (Connection, [String: String]) {
    let connection = try Connection(arguments)
    return (connection, ["authorization": "Bearer \(try adminKey(connection))"])
  }

  /// The admin key: from a file (flag, then the daemon's variable), else client.json.
  private static func adminKey(_ connection: Connection) throws(CLIError) -> String {
    let path =
      connection.arguments["admin-key-file"] ?? ProcessInfo.processInfo.environment["ANONAUTH_ADMIN_KEY_FILE"]
    if let path {
      guard let data = FileManager.default.contents(atPath: path) else {
        throw .usage("--admin-key-file \(path): cannot read it")
      }
      let key = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
      guard !key.isEmpty else { throw .usage("--admin-key-file \(path): empty") }
      return key
    }
    guard let key = connection.file["admin_key"] else {
      throw .usage("no admin key: pass --admin-key-file FILE (client.json has none)")
    }
    return key
  }

  private static func call<Request: ProtoMessage, Response: ProtoMessage>(
    _ connection: Connection, _ method: String, _ request: Request, metadata: [String: String],
    as: Response.Type
  ) async throws(CLIError) -> Response {
    do {
      return try await connection.client.call(
        "/anonauth.v1.AdminService/\(method)", request, metadata: metadata, as: Response.self)
    } catch {
      throw .failed("\(method) failed: \(error.reason): \(error.message)")
    }
  }
}
