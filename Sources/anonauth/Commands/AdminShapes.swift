/// The arguments of each `anonauth admin` command, and the one rule for the project:
/// every command that acts on a project takes it as its first argument (`[PROJECT_ID]`)
/// or as `--project PROJECT_ID`, else client.json's `project_id`. The first argument is
/// the project when the command has one argument more than its own (`get-account my-app
/// UID`), or, for `update-config`, when it is no FIELD=VALUE. `delete-accounts`, whose
/// arguments may all be UIDs, is the exception: its project is `--project` only.
enum AdminShapes {
  enum ProjectRule: Equatable {
    /// The command acts on no project (`backup`, `cluster`, `rotate-signing-key`).
    case none
    /// `[PROJECT_ID]` first, or `--project`, else client.json's.
    case positionalOrFlag
    /// `--project` or client.json's only (`delete-accounts`).
    case flagOnly
    /// The project is the command's subject and is named (`create-project PROJECT_ID`).
    case named
  }

  struct Shape {
    let project: ProjectRule
    /// The command's own fixed arguments, in order.
    let arguments: [String]
    /// Any number of these after the fixed ones ("FIELD=VALUE", "UID").
    let variadic: String?
    let options: Set<String>
    let switches: Set<String>

    init(
      _ project: ProjectRule, _ arguments: [String] = [], variadic: String? = nil, options: Set<String> = [],
      switches: Set<String> = []
    ) {
      self.project = project
      self.arguments = arguments
      self.variadic = variadic
      self.options = options
      self.switches = switches
    }

    var usage: String {
      var parts: [String] = []
      switch project {
      case .positionalOrFlag: parts.append("[PROJECT_ID]")
      case .named: parts.append("PROJECT_ID")
      case .none, .flagOnly: break
      }
      parts += arguments
      if let variadic { parts.append("\(variadic)...") }
      return parts.joined(separator: " ")
    }
  }

  static let table: [String: Shape] = [
    "create-project": Shape(.named, switches: ["anonymous", "email-password"]),
    "get-config": Shape(.positionalOrFlag),
    "update-config": Shape(.positionalOrFlag, variadic: "FIELD=VALUE"),
    "create-api-key": Shape(.positionalOrFlag),
    "list-api-keys": Shape(.positionalOrFlag),
    "revoke-api-key": Shape(.positionalOrFlag, ["KEY"]),
    "schedule-quota": Shape(.positionalOrFlag, options: ["quota", "duration-seconds", "start-ms"]),
    "list-accounts": Shape(
      .positionalOrFlag, options: ["filter", "page-size", "page-token"], switches: ["all"]),
    "get-account": Shape(.positionalOrFlag, ["UID"]),
    "disable-account": Shape(.positionalOrFlag, ["UID"], switches: ["enable"]),
    "delete-accounts": Shape(.flagOnly, variadic: "UID", options: ["file"]),
    "revoke-refresh-tokens": Shape(.positionalOrFlag, ["UID"]),
    "set-custom-claims": Shape(.positionalOrFlag, ["UID", "JSON"]),
    "preview-cleanup": Shape(.positionalOrFlag),
    "run-cleanup": Shape(.positionalOrFlag, switches: ["all-projects"]),
    "usage": Shape(.positionalOrFlag),
    "rotate-signing-key": Shape(.none),
    "backup": Shape(.none, ["NAME"]),
    "import-firebase": Shape(
      .positionalOrFlag, ["FILE"], options: ["hash-config", "on-conflict", "check-password"],
      switches: ["dry-run", "password-stdin"]),
    "export-firebase": Shape(.positionalOrFlag, ["FILE"]),
    "cluster": Shape(.none, options: ["remove"]),
    "action-link": Shape(
      .positionalOrFlag, ["TYPE", "EMAIL"], options: ["new-email", "continue-url"], switches: ["in-app"]),
  ]

  /// What an admin command was given, once checked.
  struct Resolved: Equatable {
    let command: String
    /// "" only for `run-cleanup --all-projects` and the commands that act on no project.
    let project: String
    /// The command's own arguments, the project taken out.
    let rest: [String]
  }

  /// Applies the rule: the project from the first argument, `--project` or
  /// `defaultProject` (client.json's); every other argument checked against the shape.
  static func resolve(_ arguments: Arguments, defaultProject: String?) throws(CLIError) -> Resolved {
    guard let command = arguments.positionals.first else {
      throw .usage("admin: expected a command (see anonauth admin --help)")
    }
    guard let shape = table[command] else {
      throw .usage("admin: unknown command \"\(command)\" (see anonauth admin --help)")
    }
    var rest = Array(arguments.positionals.dropFirst())
    var positionalProject: String?
    switch shape.project {
    case .positionalOrFlag:
      if shape.variadic != nil {
        // update-config: a first argument that is no FIELD=VALUE is the project.
        if let first = rest.first, !first.contains("=") { positionalProject = rest.removeFirst() }
      } else if rest.count > shape.arguments.count {
        // One more than the command's own: the first is the project (with still more, the
        // check below names the first one too many).
        positionalProject = rest.removeFirst()
      }
    case .named:
      if !rest.isEmpty { positionalProject = rest.removeFirst() }
    case .none, .flagOnly:
      break
    }
    var options = shape.options.union(["admin-key-file"])
    if shape.project != .none { options.insert("project") }
    let maximum = shape.variadic == nil ? shape.arguments.count : Int.max
    let check = CommandShape(
      "admin \(command)", usage: shape.usage, positionals: shape.arguments.count...maximum, options: options,
      switches: shape.switches)
    try check.check(arguments, positionalCount: rest.count)
    let flag = arguments["project"]
    if let positionalProject, let flag, positionalProject != flag {
      throw .usage("admin \(command): two projects named, \"\(positionalProject)\" and --project \(flag)")
    }
    var project: String
    switch shape.project {
    case .none: project = ""
    case .named:
      guard let named = positionalProject ?? flag, !named.isEmpty else {
        throw .usage("admin \(command): expected PROJECT_ID; expected: \(check.expected)")
      }
      project = named
    case .positionalOrFlag, .flagOnly:
      project = positionalProject ?? flag ?? defaultProject ?? ""
      let allProjects = command == "run-cleanup" && arguments.has("all-projects")
      if allProjects {
        if let named = positionalProject ?? flag {
          throw .usage("admin run-cleanup: --all-projects or the project \"\(named)\", not both")
        }
        project = ""
      } else if project.isEmpty {
        let how =
          shape.project == .flagOnly
          ? "--project PROJECT_ID" : "admin \(command) PROJECT_ID ... or --project PROJECT_ID"
        throw .usage("admin \(command): no project named and client.json has none: name it with \(how)")
      }
    }
    return Resolved(command: command, project: project, rest: rest)
  }
}
