import AnonAuthRPCClient
import AnonAuthWire

/// What the CLI tells a person about a project's sign-in methods: after `create-project`,
/// which are on and how to turn on the others; after an `operation-not-allowed`, which
/// method the project has off and the command that turns it on.
enum SignInMethodNotes {
  /// The lines `create-project` writes to stderr (stdout keeps only the project id).
  static func afterCreate(_ config: ProjectConfig) -> String {
    let project = config.projectId
    var on: [String] = []
    var off: [(String, String)] = []
    if config.anonymousEnabled {
      on.append("anonymous")
    } else {
      off.append(("anonymous", "anonymous_enabled=true"))
    }
    if config.emailPasswordEnabled {
      on.append("email/password")
    } else {
      off.append(("email/password", "email_password_enabled=true"))
    }
    let providers = config.idps.filter(\.enabled).map(\.providerId)
    on += providers
    var lines = ["sign-in methods on: \(on.isEmpty ? "none" : on.joined(separator: ", "))"]
    if !off.isEmpty {
      lines.append("off: \(off.map(\.0).joined(separator: ", ")); turn on with:")
      lines.append("  anonauth admin update-config \(project) \(off.map(\.1).joined(separator: " "))")
    }
    if providers.isEmpty {
      lines.append(
        "identity providers (Google, Facebook, OIDC): none; add them with "
          + "anonauth admin update-config \(project) idps=@FILE (docs/linking.md)")
    }
    return lines.joined(separator: "\n")
  }

  /// Why `link KIND` (or `signin`/`signup`) was refused with operation-not-allowed, and
  /// the admin command that allows it; nil for another error.
  static func explain(_ error: AuthError, kind: String?, provider: String?, project: String?) -> String? {
    guard error == .operationNotAllowed else { return nil }
    let target = project.map { $0.isEmpty ? "PROJECT_ID" : $0 } ?? "PROJECT_ID"
    switch kind {
    case "email":
      return "the project has email/password sign-in off; an admin turns it on with: "
        + "anonauth admin update-config \(target) email_password_enabled=true"
    case "anonymous":
      return "the project has anonymous sign-in off; an admin turns it on with: "
        + "anonauth admin update-config \(target) anonymous_enabled=true"
    case "google", "apple", "facebook", "oidc":
      let id = kind == "oidc" ? (provider ?? "oidc.NAME") : "\(kind ?? "").com"
      return "the project has \(id) sign-in off or not configured; an admin adds it (enabled, with its "
        + "client id) with: anonauth admin update-config \(target) idps=@FILE (see anonauth admin get-config \(target))"
    default:
      return "the project has this sign-in method off (see anonauth admin get-config \(target))"
    }
  }
}
