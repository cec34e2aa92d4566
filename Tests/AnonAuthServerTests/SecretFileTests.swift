import Foundation
import Glibc
import Testing

@testable import AnonAuthServer

/// Which permissions a secret file may have (the process-level refusal is in
/// BadConfigProcessTests).
@Suite("Secret file permissions")
struct SecretFileTests {
  func file(_ scratch: Scratch, mode: mode_t) throws -> String {
    let path = try scratch.write("secret-\(String(mode, radix: 8)).key", "k\n")
    chmod(path, mode)
    return path
  }

  @Test func theOwnersAloneIsAccepted() throws {
    let scratch = try Scratch()
    for mode: mode_t in [0o600, 0o400, 0o700] {
      #expect(SecretFile.problem(try file(scratch, mode: mode), processIsRoot: true) == nil)
    }
  }

  @Test func openToGroupOrOthersIsRefusedWithTheChmodToRun() throws {
    let scratch = try Scratch()
    let cases: [(mode_t, String)] = [
      (0o644, "read"), (0o640, "read"), (0o604, "read"), (0o620, "write"), (0o666, "write"),
    ]
    for (mode, verb) in cases {
      let path = try file(scratch, mode: mode)
      #expect(
        SecretFile.problem(path, processIsRoot: true)
          == "mode \(String(mode, radix: 8)) lets group or others \(verb) this secret; run: chmod 600 \(path)"
      )
    }
  }

  /// A symbolic link (a Kubernetes Secret's files are links) is judged by its target.
  @Test func aLinkIsJudgedByItsTarget() throws {
    let scratch = try Scratch()
    let target = try file(scratch, mode: 0o644)
    let link = scratch.path + "/link.key"
    try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
    #expect(SecretFile.problem(link, processIsRoot: true) != nil)
    chmod(target, 0o600)
    #expect(SecretFile.problem(link, processIsRoot: true) == nil)
  }

  /// A missing file is left to the reader, which says "cannot read it".
  @Test func aMissingFileIsNotAPermissionProblem() throws {
    let scratch = try Scratch()
    #expect(SecretFile.problem(scratch.path + "/none", processIsRoot: false) == nil)
  }

  /// Root's file read through its group by a daemon that is not root: a Kubernetes Secret
  /// with fsGroup (0440), a key kept root:anonauth 0640. Group write or any bit for
  /// others is still refused, and a daemon running as root gets no such exception.
  @Test(.enabled(if: geteuid() == 0, "needs a file owned by root"))
  func rootsFileReadThroughItsGroupByANonRootDaemon() throws {
    let scratch = try Scratch()
    for mode: mode_t in [0o440, 0o640] {
      let path = try file(scratch, mode: mode)
      #expect(SecretFile.problem(path, processIsRoot: false) == nil)
      #expect(SecretFile.problem(path, processIsRoot: true) != nil)
    }
    for mode: mode_t in [0o660, 0o644, 0o604] {
      #expect(SecretFile.problem(try file(scratch, mode: mode), processIsRoot: false) != nil)
    }
  }
}
