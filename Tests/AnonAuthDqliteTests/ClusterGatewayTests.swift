import AnonAuthCrypto
import Foundation
import Glibc
import Testing

@testable import AnonAuthDqlite

/// The cluster port's TLS gateway and the dialer, against an echo standing in for the
/// node: bytes pass both ways only after a handshake with a certificate of the cluster CA;
/// every other peer is refused before a byte reaches the node. A class, so that each
/// test's certificates directory is removed when the test ends.
@Suite final class ClusterGatewayTests {
  let directory: String
  let ca: TestAuthority

  init() throws {
    directory =
      FileManager.default.temporaryDirectory.appendingPathComponent("cluster-tls-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    ca = try TestAuthority("cluster", directory: directory)
  }

  deinit { try? FileManager.default.removeItem(atPath: directory) }

  private func gateway(_ node: EchoNode, _ slot: ClusterTLSSlot) throws -> ClusterGateway {
    let gateway = try ClusterGateway(
      listen: "127.0.0.1:\(try LoopbackNodes.freePort())", nodeSocket: node.name, tls: slot,
      handshakeTimeoutMs: 5_000)
    gateway.start()
    return gateway
  }

  /// A client whose handshake the gateway must refuse: whatever the client's side of the
  /// handshake says (TLS 1.3 clients finish before the server checks them), nothing comes
  /// back, the gateway counts a refusal and the node saw no connection.
  private func expectRefused(
    _ client: ClusterTLSContext?, gateway: ClusterGateway, node: EchoNode, refusals: Int
  ) async throws {
    let tcp = try TestSockets.tcp(gateway.port)
    if let client,
      let fd = try? ClusterDialer.secure(tcp, address: "gateway", context: client, timeoutMs: 5_000)
    {
      #expect(TestSockets.roundTrip(fd, Array("SELECT secret FROM accounts".utf8)).isEmpty)
      close(fd)
    } else if client == nil {
      // Not TLS at all: dqlite's own handshake, in the clear.
      #expect(TestSockets.roundTrip(tcp, [1, 0, 0, 0, 0, 0, 0, 0]).isEmpty)
      close(tcp)
    }
    try await LoopbackNodes.eventually {
      guard gateway.refusedHandshakes >= refusals else { throw DqliteError.io("not refused yet") }
    }
    #expect(node.connections.load(ordering: .relaxed) == 0)
    #expect(node.bytes.load(ordering: .relaxed) == 0)
  }

  @Test func aMemberPumpsBytesBothWaysThroughTheGateway() throws {
    let node = try EchoNode()
    let gateway = try gateway(node, ClusterTLSSlot(try ca.context("node-1")))
    defer { gateway.stop() }
    let tcp = try TestSockets.tcp(gateway.port)
    let fd = try ClusterDialer.secure(
      tcp, address: "node-1", context: try ca.context("node-2"), timeoutMs: 5_000)
    defer { close(fd) }
    // Several times the pump's buffer: it must hold back and resume in both directions.
    let payload = (0..<(5 * TLSPump.bufferBytes + 123)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
    #expect(TestSockets.roundTrip(fd, payload) == payload)
    #expect(node.connections.load(ordering: .relaxed) == 1)
  }

  @Test func aPeerWithoutTLSIsRefusedAndTheNodeGetsNoByte() async throws {
    let node = try EchoNode()
    let gateway = try gateway(node, ClusterTLSSlot(try ca.context("node-1")))
    defer { gateway.stop() }
    try await expectRefused(nil, gateway: gateway, node: node, refusals: 1)
  }

  @Test func aCertificateFromAnotherCAIsRefused() async throws {
    let node = try EchoNode()
    let gateway = try gateway(node, ClusterTLSSlot(try ca.context("node-1")))
    defer { gateway.stop() }
    let stranger = try TestAuthority("stranger", directory: directory)
    try await expectRefused(
      try stranger.context("intruder", trusting: ca), gateway: gateway, node: node, refusals: 1)
  }

  @Test func anExpiredCertificateIsRefused() async throws {
    let node = try EchoNode()
    let gateway = try gateway(node, ClusterTLSSlot(try ca.context("node-1")))
    defer { gateway.stop() }
    try await expectRefused(try ca.context("old", expired: true), gateway: gateway, node: node, refusals: 1)
  }

  @Test func aReloadedIdentityTrustsTheNewCAOnly() async throws {
    let node = try EchoNode()
    let slot = ClusterTLSSlot(try ca.context("node-1"))
    let gateway = try gateway(node, slot)
    defer { gateway.stop() }
    let next = try TestAuthority("next", directory: directory)
    slot.replace(try next.context("node-1"))
    let fd = try ClusterDialer.secure(
      try TestSockets.tcp(gateway.port), address: "node-1", context: try next.context("node-2"),
      timeoutMs: 5_000)
    #expect(TestSockets.roundTrip(fd, Array("after the reload".utf8)) == Array("after the reload".utf8))
    close(fd)
    #expect(node.connections.load(ordering: .relaxed) == 1)
    // The old CA's certificates no longer get in (the client still trusts the server's new CA).
    let (certificate, key) = try ca.node("node-3")
    let old = try ClusterTLSContext(caFile: next.caFile, certificateFile: certificate, keyFile: key)
    let tcp = try TestSockets.tcp(gateway.port)
    if let fd = try? ClusterDialer.secure(tcp, address: "node-1", context: old, timeoutMs: 5_000) {
      #expect(TestSockets.roundTrip(fd, [1, 2, 3]).isEmpty)
      close(fd)
    }
    try await LoopbackNodes.eventually {
      guard gateway.refusedHandshakes >= 1 else { throw DqliteError.io("not refused yet") }
    }
    #expect(node.connections.load(ordering: .relaxed) == 1)
  }

  @Test func theDevelopmentCAIsTheSameForTheSameMasterKey() throws {
    let key = Array(repeating: UInt8(7), count: 32)
    let first = try TestAuthority("dev-a", directory: directory, development: key)
    let second = try TestAuthority("dev-b", directory: directory, development: key)
    let node = try EchoNode()
    // Node 1 made its CA certificate; node 2 its own, from the same key: they trust each other.
    let gateway = try gateway(node, ClusterTLSSlot(try first.context("node-1")))
    defer { gateway.stop() }
    let fd = try ClusterDialer.secure(
      try TestSockets.tcp(gateway.port), address: "node-1", context: try second.context("node-2"),
      timeoutMs: 5_000)
    #expect(TestSockets.roundTrip(fd, [9, 8, 7]) == [9, 8, 7])
    close(fd)
    let other = try TestAuthority("dev-c", directory: directory, development: Array(repeating: 8, count: 32))
    #expect(other.authority.certificatePEM != first.authority.certificatePEM)
  }

  @Test func peersThatSayNothingCannotHoldMoreThanTheHandshakeLimit() async throws {
    let node = try EchoNode()
    let gateway = try ClusterGateway(
      listen: "127.0.0.1:\(try LoopbackNodes.freePort())", nodeSocket: node.name,
      tls: ClusterTLSSlot(try ca.context("node-1")), handshakeTimeoutMs: 60_000, maxHandshakes: 1)
    gateway.start()
    defer { gateway.stop() }
    let silent = try TestSockets.tcp(gateway.port)
    try await LoopbackNodes.eventually {
      guard gateway.pendingHandshakes == 1 else { throw DqliteError.io("not accepted yet") }
    }
    // Over the limit: closed at once, without a thread.
    let excess = try TestSockets.tcp(gateway.port)
    #expect(TestSockets.roundTrip(excess, [1]).isEmpty)
    close(excess)
    #expect(gateway.refusedHandshakes == 1)
    // The silent one gone, a member gets in.
    close(silent)
    try await LoopbackNodes.eventually {
      guard gateway.pendingHandshakes == 0 else { throw DqliteError.io("still pending") }
    }
    let fd = try ClusterDialer.secure(
      try TestSockets.tcp(gateway.port), address: "node-1", context: try ca.context("node-2"),
      timeoutMs: 5_000)
    #expect(TestSockets.roundTrip(fd, [4, 5, 6]) == [4, 5, 6])
    close(fd)
  }
}
