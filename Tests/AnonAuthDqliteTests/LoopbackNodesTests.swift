import Testing

@testable import AnonAuthDqlite

/// The test harness's ports: below the ephemeral range, and never the same twice in one
/// process (two nodes bound to one port with SO_REUSEADDR leave the second one's start
/// waiting for ever).
@Suite struct LoopbackNodesTests {
  @Test func freePortsAreDistinctAndBelowTheEphemeralRange() throws {
    let ports = try (0..<300).map { _ in try LoopbackNodes.freePort() }
    #expect(Set(ports).count == ports.count)
    let low = LoopbackNodes.ephemeralRangeStart()
    #expect(ports.allSatisfy { $0 >= 10_000 && $0 < max(10_001, low) })
  }
}
