import AnonAuthServer
import CBuildInfo
import Foundation

let arguments = Array(CommandLine.arguments.dropFirst())
// `--version`: the release, the commit and the build day (`make build` embeds the last two;
// a plain `swift build` says "unknown" for them). Nothing of the daemon starts.
if arguments.first == "--version" {
  let version = String(cString: anonauth_build_version())
  let commit = String(cString: anonauth_build_commit())
  let date = String(cString: anonauth_build_date())
  FileHandle.standardOutput.write(Data("anonauthd \(version) (commit \(commit), built \(date))\n".utf8))
  exit(0)
}
// `--print-reference <page>` prints a generated docs page (docs/reasons.md,
// docs/metrics.md) and exits: nothing of the daemon starts, so `make reference-docs`
// needs no data directory or port.
if arguments.first == "--print-reference" {
  let name = arguments.dropFirst().first ?? ""
  guard let page = ReferencePages.render(name) else {
    let names = ReferencePages.pages.map(\.name).joined(separator: "|")
    FileHandle.standardError.write(Data("usage: anonauthd --print-reference \(names)\n".utf8))
    exit(2)
  }
  FileHandle.standardOutput.write(Data(page.utf8))
  exit(0)
}

let code = await Daemon.main(arguments: arguments, environment: ProcessInfo.processInfo.environment)
// By here the store is closed and every connection is gone. `_exit` skips the atexit
// handlers (OpenSSL's global clean-up, C++ static destructors), which would otherwise run
// on this thread while idle pool threads still hold OpenSSL and Foundation state: a
// shutdown once aborted with "double free or corruption" that way.
fflush(nil)
_exit(code)
