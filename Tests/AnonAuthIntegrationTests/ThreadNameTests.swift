import AnonAuthRPCClient
import Foundation
import Testing

/// The README promises threads named for `top -H`: a real daemon, after calls that wake
/// every pool, has only threads of `DaemonThreadNames`, and each of its own kinds.
@Suite struct ThreadNameTests {
  @Test func everyThreadOfADaemonHasADocumentedName() async throws {
    let daemon = try await DaemonProcess.start()
    let auth = Auth(client: try daemon.client(), apiKey: daemon.apiKey)
    // Writes, signatures and scrypt: every pool has run a job.
    _ = try await auth.createUser(withEmail: "threads@example.com", password: "correct horse")
    _ = try await auth.signIn(withEmail: "threads@example.com", password: "correct horse")

    let names = try Self.threadNames(pid: daemon.process.pid)
    for name in names {
      #expect(DaemonThreadNames.kind(of: name) != nil, "undocumented thread \(name) in \(names.sorted())")
    }
    for kind in DaemonThreadNames.kinds where kind.always {
      #expect(
        names.contains { DaemonThreadNames.kind(of: $0)?.pattern == kind.pattern },
        "no \(kind.pattern) thread in \(names.sorted())")
    }
  }

  /// Every thread's name, from `/proc/PID/task/*/comm`; a thread that ends while it is
  /// read is left out.
  static func threadNames(pid: Int32) throws -> [String] {
    let tasks = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")
    return tasks.compactMap { task in
      let comm = "/proc/\(pid)/task/\(task)/comm"
      guard let data = FileManager.default.contents(atPath: comm) else { return nil }
      return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .newlines)
    }
  }
}
