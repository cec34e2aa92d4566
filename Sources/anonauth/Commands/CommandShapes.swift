/// The shapes of the top-level commands (`admin` checks its own, per subcommand, in
/// `AdminShapes`; `bench` takes its many options unchecked).
enum CommandShapes {
  static let credentialOptions: Set<String> = [
    "email", "password", "id-token", "access-token", "provider", "nonce", "raw-nonce", "name",
  ]
  static let credentialSwitches: Set<String> = ["password-stdin", "id-token-stdin", "access-token-stdin"]

  static let table: [String: CommandShape] = [
    "health": CommandShape("health"),
    "signin-anonymously": CommandShape("signin-anonymously"),
    "whoami": CommandShape("whoami"),
    "token": CommandShape("token", switches: ["force-refresh"]),
    "verify": CommandShape("verify", usage: "TOKEN", positionals: 1...1, switches: ["check-revoked"]),
    "signup": CommandShape(
      "signup", usage: "email --email EMAIL", positionals: 1...1, options: ["email", "password"],
      switches: ["password-stdin"]),
    "signin": CommandShape(
      "signin", usage: "email|google|apple|facebook|oidc|firebase", positionals: 1...1,
      options: credentialOptions,
      switches: credentialSwitches),
    "link": CommandShape(
      "link", usage: "email|google|apple|facebook|oidc", positionals: 1...1, options: credentialOptions,
      switches: credentialSwitches),
    "unlink": CommandShape("unlink", usage: "PROVIDER", positionals: 1...1),
    "delete": CommandShape("delete"),
    "signout": CommandShape("signout"),
    "reset-password": CommandShape(
      "reset-password", usage: "--email EMAIL | --code CODE", options: ["email", "code", "password"],
      switches: ["password-stdin", "check"]),
    "verify-email": CommandShape("verify-email", usage: "[--code CODE]", options: ["code", "new-email"]),
  ]
}
