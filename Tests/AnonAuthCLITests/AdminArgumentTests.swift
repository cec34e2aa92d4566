import Testing

@testable import anonauth

/// The one rule for the project of `anonauth admin` commands, and the refusal of what a
/// command cannot use (issue 36: `admin get-config my-app` dropped the project silently).
@Suite struct AdminArgumentTests {
  func resolve(_ raw: [String], defaultProject: String? = "dev-project") throws(CLIError)
    -> AdminShapes.Resolved
  {
    try AdminShapes.resolve(
      Arguments(raw, switchNames: Connection.switchNames.union(AdminCommand.switches)),
      defaultProject: defaultProject)
  }

  func usageError(_ raw: [String], defaultProject: String? = "dev-project") -> String? {
    do {
      _ = try resolve(raw, defaultProject: defaultProject)
      return nil
    } catch {
      guard case .usage(let message) = error else { return "not a usage error: \(error)" }
      return message
    }
  }

  @Test func theProjectComesFirstOrFromTheFlagOrClientJSON() throws {
    #expect(try resolve(["get-config", "my-app"]).project == "my-app")
    #expect(try resolve(["get-config", "--project", "my-app"]).project == "my-app")
    #expect(try resolve(["get-config"]).project == "dev-project")
    #expect(try resolve(["get-config", "my-app", "--project", "my-app"]).project == "my-app")
    #expect(try resolve(["usage", "my-app"]).project == "my-app")
    #expect(try resolve(["list-accounts", "my-app", "--filter", "anonymous"]).project == "my-app")
    #expect(try resolve(["create-api-key", "my-app"]).project == "my-app")
  }

  @Test func aCommandWithItsOwnArgumentsTakesTheProjectBeforeThem() throws {
    #expect(
      try resolve(["get-account", "UID1"])
        == .init(command: "get-account", project: "dev-project", rest: ["UID1"]))
    #expect(
      try resolve(["get-account", "my-app", "UID1"])
        == .init(command: "get-account", project: "my-app", rest: ["UID1"]))
    #expect(try resolve(["set-custom-claims", "my-app", "U", "{}"]).rest == ["U", "{}"])
    #expect(try resolve(["set-custom-claims", "U", "{}"]).project == "dev-project")
    #expect(try resolve(["import-firebase", "my-app", "users.json", "--dry-run"]).project == "my-app")
  }

  @Test func updateConfigTakesAFirstArgumentWithoutEqualsAsTheProject() throws {
    let named = try resolve([
      "update-config", "my-app", "auto_cleanup_enabled=true", "sign_up_quota_per_hour=5",
    ])
    #expect(named.project == "my-app")
    #expect(named.rest == ["auto_cleanup_enabled=true", "sign_up_quota_per_hour=5"])
    #expect(try resolve(["update-config", "auto_cleanup_enabled=true"]).project == "dev-project")
  }

  @Test func deleteAccountsTakesUIDsOnlyAndTheProjectByFlag() throws {
    let r = try resolve(["delete-accounts", "a", "b", "--project", "my-app"])
    #expect(r.project == "my-app" && r.rest == ["a", "b"])
  }

  @Test func createProjectNeedsItsProject() throws {
    #expect(try resolve(["create-project", "new-app", "--anonymous"]).project == "new-app")
    #expect(usageError(["create-project"])?.contains("expected PROJECT_ID") == true)
  }

  @Test func anExtraArgumentIsRefusedByNameWithTheUsage() {
    let message = usageError(["get-config", "my-app", "extra"])
    #expect(message?.contains("unexpected argument \"extra\"") == true)
    #expect(message?.contains("anonauth admin get-config [PROJECT_ID]") == true)
    #expect(usageError(["get-account", "my-app", "UID", "more"])?.contains("\"more\"") == true)
    #expect(usageError(["backup", "a", "b"])?.contains("unexpected argument \"b\"") == true)
    #expect(usageError(["get-account"])?.contains("missing argument") == true)
  }

  @Test func anUnknownOptionIsRefusedByName() {
    #expect(usageError(["get-config", "--bogus", "1"])?.contains("unknown option --bogus") == true)
    #expect(usageError(["get-config", "--bogus"])?.contains("unknown option --bogus") == true)
    // A switch of another command.
    #expect(usageError(["get-config", "--dry-run"])?.contains("unknown option --dry-run") == true)
    // A command that acts on no project takes no --project.
    #expect(
      usageError(["rotate-signing-key", "--project", "x"])?.contains("unknown option --project") == true)
    #expect(usageError(["get-config", "--json=yes"])?.contains("--json takes no value") == true)
    #expect(usageError(["list-accounts", "--filter"])?.contains("--filter needs a value") == true)
  }

  @Test func twoDifferentProjectsAreRefused() {
    #expect(usageError(["get-config", "a", "--project", "b"])?.contains("two projects") == true)
    #expect(usageError(["run-cleanup", "a", "--all-projects"])?.contains("not both") == true)
  }

  @Test func noProjectAnywhereSaysHowToNameIt() throws {
    let message = usageError(["get-config"], defaultProject: nil)
    #expect(message?.contains("--project PROJECT_ID") == true)
    #expect(try resolve(["run-cleanup", "--all-projects"], defaultProject: nil).project == "")
    #expect(try resolve(["cluster"], defaultProject: nil).project == "")
  }

  @Test func anUnknownCommandIsRefused() {
    #expect(usageError(["get-konfig"])?.contains("unknown command \"get-konfig\"") == true)
  }

  @Test func everyCommandOfTheHelpHasAShape() {
    for line in AdminCommand.help.split(separator: "\n") {
      let words = line.split(separator: " ")
      guard line.hasPrefix("  "), let first = words.first, first.contains("-"), !first.hasPrefix("-"),
        first.lowercased() == first, !line.hasPrefix("                ")
      else { continue }
      #expect(AdminShapes.table[String(first)] != nil, "\(first)")
    }
  }
}

/// The top-level commands refuse what they cannot use too.
@Suite struct CommandArgumentTests {
  func check(_ name: String, _ raw: [String]) -> String? {
    guard let shape = CommandShapes.table[name] else { return "no shape" }
    do {
      try shape.check(Arguments(raw, switchNames: Connection.switchNames))
      return nil
    } catch {
      return error.description
    }
  }

  @Test func knownArgumentsPass() {
    #expect(check("whoami", ["--json", "--data-dir", "d"]) == nil)
    #expect(check("link", ["email", "--email", "a@b.c", "--password-stdin"]) == nil)
    #expect(check("verify", ["TOKEN", "--check-revoked"]) == nil)
  }

  @Test func unknownOrExtraArgumentsAreRefused() {
    #expect(check("whoami", ["extra"])?.contains("unexpected argument \"extra\"") == true)
    #expect(check("whoami", ["--bogus", "x"])?.contains("unknown option --bogus") == true)
    #expect(check("verify", [])?.contains("missing argument") == true)
    #expect(check("token", ["--check-revoked"])?.contains("unknown option --check-revoked") == true)
  }
}
