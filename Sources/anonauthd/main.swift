import AnonAuthServer
import Foundation

let code = await Daemon.main(
  arguments: Array(CommandLine.arguments.dropFirst()), environment: ProcessInfo.processInfo.environment)
// By here the store is closed and every connection is gone. `_exit` skips the atexit
// handlers (OpenSSL's global clean-up, C++ static destructors), which would otherwise run
// on this thread while idle pool threads still hold OpenSSL and Foundation state: a
// shutdown once aborted with "double free or corruption" that way.
fflush(nil)
_exit(code)
