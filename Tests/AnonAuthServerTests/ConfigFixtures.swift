import AnonAuthTestSupport
import Foundation

/// A temporary directory for one test's files (config files, keys), removed on deinit.
final class Scratch {
  let path: String

  init() throws {
    path =
      FileManager.default.temporaryDirectory.appendingPathComponent("anonauth-server-\(UUID().uuidString)")
      .path
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
  }

  deinit { try? FileManager.default.removeItem(atPath: path) }

  /// Writes `text` to `name` in the directory and returns its path.
  @discardableResult
  func write(_ name: String, _ text: String) throws -> String {
    let file = path + "/" + name
    try Data(text.utf8).write(to: URL(fileURLWithPath: file))
    return file
  }
}

/// What a finished process left: its exit status and both outputs.
struct Finished {
  let status: Int32
  let stdout: String
  let stderr: String

  var stderrLines: [Substring] { stderr.split(separator: "\n", omittingEmptySubsequences: false).dropLast() }
}

/// Runs the real `anonauthd` to completion (it must exit by itself: a bad setting, `--help`
/// or `--print-config`), with only the given environment.
func runDaemon(_ arguments: [String], environment: [String: String] = [:]) throws -> Finished {
  let process = try ChildProcess(
    TestBinaries.anonauthd, arguments, environment: environment, stdout: .pipe, stderr: .pipe)
  let stdout = process.stdout?.readDataToEndOfFile() ?? Data()
  let stderr = process.stderr?.readDataToEndOfFile() ?? Data()
  let status = process.wait()
  return Finished(
    status: status, stdout: String(decoding: stdout, as: UTF8.self),
    stderr: String(decoding: stderr, as: UTF8.self))
}
