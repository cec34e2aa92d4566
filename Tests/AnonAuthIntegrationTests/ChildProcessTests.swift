import AnonAuthTestSupport
import Foundation
import Glibc
import Testing

/// The tests' launcher hands a child its three streams and nothing else: a descriptor
/// the test process holds without close-on-exec (libdqlite's listener is one) would
/// otherwise live on in every daemon a test starts.
@Suite struct ChildProcessTests {
  @Test func aChildGetsNoDescriptorBeyondItsStreams() throws {
    var fds: [Int32] = [-1, -1]
    try #require(pipe(&fds) == 0)
    defer { for fd in fds { close(fd) } }
    var status = stat()
    try #require(fstat(fds[0], &status) == 0)
    let leaked = "pipe:[\(status.st_ino)]"

    let child = try ChildProcess("/bin/ls", ["-l", "/proc/self/fd"], environment: [:])
    let listing = String(decoding: child.stdout?.readDataToEndOfFile() ?? Data(), as: UTF8.self)
    #expect(child.wait() == 0)
    #expect(listing.contains(" 1 -> pipe:"), "ls printed: \(listing)")
    #expect(!listing.contains(leaked), "the child holds the test's pipe: \(listing)")
  }
}
