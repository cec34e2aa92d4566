import CBuildInfo
import Foundation

/// The `anonauth` command line: one subcommand per task, `--help` on each.
let commands:
  [(name: String, summary: String, help: String, run: (Arguments) async throws(CLIError) -> Void)] = [
    ("health", HealthCommand.summary, HealthCommand.help, HealthCommand.run),
    (
      "signin-anonymously", SessionCommands.signInSummary, SessionCommands.signInHelp,
      SessionCommands.signInAnonymously
    ),
    ("whoami", SessionCommands.whoamiSummary, SessionCommands.whoamiHelp, SessionCommands.whoami),
    ("token", SessionCommands.tokenSummary, SessionCommands.tokenHelp, SessionCommands.token),
    ("verify", SessionCommands.verifySummary, SessionCommands.verifyHelp, SessionCommands.verify),
    ("signup", LinkCommands.signUpSummary, LinkCommands.signUpHelp, LinkCommands.signUp),
    ("signin", LinkCommands.signInSummary, LinkCommands.signInHelp, LinkCommands.signIn),
    ("link", LinkCommands.linkSummary, LinkCommands.linkHelp, LinkCommands.link),
    ("unlink", LinkCommands.unlinkSummary, LinkCommands.unlinkHelp, LinkCommands.unlink),
    ("delete", SessionCommands.deleteSummary, SessionCommands.deleteHelp, SessionCommands.delete),
    ("signout", SessionCommands.signOutSummary, SessionCommands.signOutHelp, SessionCommands.signOut),
    (
      "reset-password", EmailActionCommands.resetSummary, EmailActionCommands.resetHelp,
      EmailActionCommands.resetPassword
    ),
    (
      "verify-email", EmailActionCommands.verifySummary, EmailActionCommands.verifyHelp,
      EmailActionCommands.verifyEmail
    ),
    ("admin", AdminCommand.summary, AdminCommand.help, AdminCommand.run),
    ("bench", BenchCommand.summary, BenchCommand.help, BenchCommand.run),
  ]

@MainActor func usage() -> String {
  var out =
    "Usage: anonauth COMMAND [options]    (anonauth --version: version, commit, build date)\n\nCommands:\n"
  for command in commands {
    out += "  \(command.name.padding(toLength: 22, withPad: " ", startingAt: 0))\(command.summary)\n"
  }
  out += "\nRun 'anonauth COMMAND --help' for a command's options.\n"
  return out
}

let raw = Array(CommandLine.arguments.dropFirst())
if raw.first == "--version" {
  print(
    "anonauth \(String(cString: anonauth_build_version())) (commit \(String(cString: anonauth_build_commit())), "
      + "built \(String(cString: anonauth_build_date())))")
  quit(0)
}
guard let name = raw.first, name != "--help", name != "-h", name != "help" else {
  print(usage(), terminator: "")
  quit(raw.isEmpty ? 2 : 0)
}
guard let command = commands.first(where: { $0.name == name }) else {
  FileHandle.standardError.write(Data("anonauth: unknown command \"\(name)\"\n\n\(usage())".utf8))
  quit(2)
}
let rest = Array(raw.dropFirst())
if rest.contains("--help") || rest.contains("-h") {
  print(command.help)
  quit(0)
}
do {
  let arguments = Arguments(
    rest,
    switchNames: Connection.switchNames.union(AdminCommand.switches).union(BenchCommand.switches)
      .union(EmailActionCommands.switches))
  if let shape = CommandShapes.table[name] {
    try shape.check(arguments)
  } else if name != "admin" {
    try arguments.requireValues()
  }
  try await command.run(arguments)
  quit(0)
} catch {
  if !error.description.isEmpty {
    FileHandle.standardError.write(Data("anonauth: \(error.description)\n".utf8))
  }
  switch error {
  case .usage: quit(2)
  case .failed: quit(1)
  }
}

/// Ends the process without atexit handlers (OpenSSL's global clean-up would race the
/// client's event-loop thread); stdout is flushed first.
func quit(_ code: Int32) -> Never {
  fflush(nil)
  _exit(code)
}
