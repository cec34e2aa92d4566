import Foundation
import Glibc
import Testing

@testable import AnonAuthDqlite

/// A node's descriptors must not outlive it in a child process. libdqlite 1.11.1 opens
/// its listening socket without close-on-exec: a process started while a node ran kept
/// the port listening after the node stopped, and the node could not bind it again (CI
/// saw "cannot bind" twice, while other tests were running daemons).
@Suite(.serialized) struct NodeDescriptorTests {
  @Test func aChildStartedWhileANodeRunsDoesNotKeepItsPort() async throws {
    let harness = try LoopbackNodes()
    try harness.start(1)
    // A plain posix_spawn with no file actions: the child gets every descriptor that is
    // not close-on-exec, as any library's launcher would give it.
    var child: pid_t = 0
    let words: [String] = ["/bin/sleep", "30"]
    let argv = words.map { strdup($0) }
    defer { for pointer in argv { free(pointer) } }
    let spawned = posix_spawn(&child, "/bin/sleep", nil, nil, argv + [nil], environ)
    try #require(spawned == 0)
    defer {
      kill(child, SIGKILL)
      var status: Int32 = 0
      waitpid(child, &status, 0)
    }
    harness.stop(1)
    try harness.start(1)
    let connection = try await LoopbackNodes.eventually {
      try DqliteConnector(seeds: harness.seeds).connectToLeader()
    }
    connection.close()
  }

  @Test func theListenerIsCloseOnExec() throws {
    let harness = try LoopbackNodes()
    try harness.start(1)
    defer { harness.stop(1) }
    let address = try #require(harness.addresses[1])
    let port = try #require(UInt16(address.split(separator: ":").last ?? ""))
    let listeners = OpenDescriptors.sockets(onPort: port)
    #expect(!listeners.isEmpty)
    let inherited = listeners.filter { fd in
      let flags = fcntl(fd, F_GETFD)
      return flags >= 0 && flags & FD_CLOEXEC == 0
    }
    #expect(inherited.isEmpty, "sockets on \(port) a child would inherit: \(inherited)")
  }
}
