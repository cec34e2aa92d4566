import AnonAuthNet
import Testing

@testable import AnonAuthServer

/// The clocks and drain state every server connection shares.
@Suite struct ConnectionLifecycleTests {
  static func lifecycle() throws -> ConnectionLifecycle {
    var config = RPCServerConfig(listen: try SocketAddress(parsing: "127.0.0.1:0"))
    config.handshakeTimeoutMs = 10
    config.partialFrameTimeoutMs = 20
    config.idleTimeoutMs = 30
    return ConnectionLifecycle(config: config)
  }

  static let ms: UInt64 = 1_000_000

  @Test func theHandshakeClockComesFirstAndHidesTheOthers() throws {
    let l = try Self.lifecycle()
    #expect(
      l.expiry(now: 11 * Self.ms, handshakeSince: 0, partialSince: 0, lastActivity: 0, idle: true)
        == .handshake)
    // Still within the handshake: nothing else is looked at.
    #expect(
      l.expiry(now: 9 * Self.ms, handshakeSince: 0, partialSince: 0, lastActivity: 0, idle: true) == nil)
  }

  @Test func aPartialRequestExpiresBeforeIdleness() throws {
    let l = try Self.lifecycle()
    #expect(l.expiry(now: 21 * Self.ms, partialSince: 0, lastActivity: 0, idle: true) == .partialRequest)
    #expect(l.expiry(now: 19 * Self.ms, partialSince: 0, lastActivity: 0, idle: true) == nil)
    #expect(l.expiry(now: 31 * Self.ms, partialSince: nil, lastActivity: 0, idle: true) == .idle)
    // A call in flight: never idle.
    #expect(l.expiry(now: 31 * Self.ms, partialSince: nil, lastActivity: 0, idle: false) == nil)
  }

  @Test func anInstantStampedAfterNowIsNoAge() throws {
    let l = try Self.lifecycle()
    #expect(l.expiry(now: 5, partialSince: 100 * Self.ms, lastActivity: 100 * Self.ms, idle: true) == nil)
    #expect(!l.partialExpired(since: 100 * Self.ms, now: 5))
  }

  @Test func phasesOnlyMoveForward() throws {
    var l = try Self.lifecycle()
    #expect(l.isServing)
    let moves = [l.beginDraining(), l.beginDraining()]
    #expect(moves == [true, false])
    #expect(l.isDraining && !l.isClosing)
    let closes = [l.beginClosing(), l.beginClosing(), l.beginDraining()]
    #expect(closes == [true, false, false])
    #expect(l.isDraining && l.isClosing)
  }
}
