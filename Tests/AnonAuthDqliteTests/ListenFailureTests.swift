import Foundation
import Glibc
import Testing

@testable import AnonAuthDqlite

/// A node that cannot listen must say so, not wait: libdqlite 1.11.1's
/// `dqlite_node_start` waits for ever when its thread's `listen` fails.
@Suite(.serialized) struct ListenFailureTests {
  @Test func aPortSomeoneListensOnIsRefusedNamingTheAddress() throws {
    let port = try LoopbackNodes.freePort()
    let holder = try Self.socket(boundTo: port)
    defer { close(holder) }
    #expect(listen(holder, 1) == 0)
    do {
      try ListenCheck.check("127.0.0.1:\(port)")
      Issue.record("a port with a listener passed the check")
    } catch {
      #expect("\(error)".contains("cannot listen on 127.0.0.1:\(port)"))
      #expect("\(error)".contains("in use"))
    }
  }

  @Test func anAddressThatIsNotThisMachinesIsRefused() throws {
    // 192.0.2.0/24 is TEST-NET-1: documentation only, never a local address.
    #expect(throws: DqliteError.self) { try ListenCheck.check("192.0.2.1:9001") }
  }

  @Test func aFreePortAndAnAbstractSocketPass() throws {
    try ListenCheck.check("127.0.0.1:\(LoopbackNodes.freePort())")
    try ListenCheck.check("@anonauth-listen-check")
  }

  /// The case the check cannot see: the port is free when the node binds it, and taken
  /// by another listener before the node's thread listens (two nodes given one port,
  /// both binding with SO_REUSEADDR). The start gives up instead of waiting for ever.
  @Test func aStartWhoseListenFailsIsGivenUpOn() throws {
    let port = try LoopbackNodes.freePort()
    let other = try Self.socket(boundTo: port)
    defer { close(other) }
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
      "dqlite-\(UUID().uuidString)"
    ).path
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let node = try DqliteNode(id: 1, address: "127.0.0.1:\(port)", directory: directory)
    #expect(listen(other, 1) == 0)
    do {
      try node.start(within: 2)
      Issue.record("the node started on a port another socket listens on")
    } catch {
      #expect("\(error)".contains("127.0.0.1:\(port)"))
    }
  }

  /// A TCP socket with SO_REUSEADDR (as libdqlite's) bound to 127.0.0.1:`port`.
  private static func socket(boundTo port: Int) throws -> Int32 {
    let fd = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    try #require(fd >= 0)
    var one: Int32 = 1
    _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    try #require(bound == 0)
    return fd
  }
}
