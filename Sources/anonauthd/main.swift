import AnonAuthServer
import Foundation

let code = await Daemon.main(
  arguments: Array(CommandLine.arguments.dropFirst()), environment: ProcessInfo.processInfo.environment)
exit(code)
