import Glibc
import Testing

@testable import AnonAuthDqlite

/// Outgoing cluster connections leave from the node's listen address, so that a peer (a
/// firewall, the partition tests' proxy) can tell nodes on one machine apart.
///
/// Serialized, and the source is cleared after each test: it is process-wide.
@Suite(.serialized) struct OutgoingSourceTests {
  @Test func connectionsLeaveFromTheListenAddress() throws {
    defer { OutgoingSource.use(listenAddress: "0.0.0.0:1") }
    OutgoingSource.use(listenAddress: "127.0.0.12:9001")
    #expect(OutgoingSource.current == "127.0.0.12")
    #expect(try Self.sourceOfAConnection() == "127.0.0.12")
  }

  @Test func aWildcardOrANameLeavesTheChoiceToTheKernel() throws {
    defer { OutgoingSource.use(listenAddress: "0.0.0.0:1") }
    OutgoingSource.use(listenAddress: "0.0.0.0:9001")
    #expect(OutgoingSource.current == nil)
    OutgoingSource.use(listenAddress: "[::]:9001")
    #expect(OutgoingSource.current == nil)
    OutgoingSource.use(listenAddress: "node-1.example:9001")
    #expect(OutgoingSource.current == nil)
    #expect(try Self.sourceOfAConnection() == "127.0.0.1")
  }

  @Test func aRoutableSourceIsNotUsedTowardsLoopback() throws {
    defer { OutgoingSource.use(listenAddress: "0.0.0.0:1") }
    OutgoingSource.use(listenAddress: "192.0.2.1:9001")
    #expect(OutgoingSource.current == "192.0.2.1")
    #expect(try Self.sourceOfAConnection() == "127.0.0.1")
  }

  /// Connects to a listener on 127.0.0.1 through the dialer and returns the host the
  /// listener saw.
  private static func sourceOfAConnection() throws -> String {
    let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    try #require(server >= 0)
    defer { close(server) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(server, $0, length) == 0 && listen(server, 1) == 0 && getsockname(server, $0, &length) == 0
      }
    }
    try #require(bound)
    let port = UInt16(bigEndian: address.sin_port)
    let client = try DqliteSocket.connectedDescriptor(to: "127.0.0.1:\(port)", timeoutMs: 5_000)
    defer { close(client) }
    var peer = sockaddr_in()
    var peerLength = socklen_t(MemoryLayout<sockaddr_in>.size)
    let accepted = withUnsafeMutablePointer(to: &peer) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { accept(server, $0, &peerLength) }
    }
    try #require(accepted >= 0)
    defer { close(accepted) }
    return String(cString: inet_ntoa(peer.sin_addr))
  }
}
