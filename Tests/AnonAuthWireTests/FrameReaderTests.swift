import Testing

@testable import AnonAuthWire

/// The incremental codec both ends of `anonauth/1` share: Pings answered in the reader,
/// the frames-per-turn budget, the partial-frame clock and the receive charge.
@Suite struct FrameReaderTests {
  /// A budget of `limit` bytes that records what it was asked to hold.
  final class Charge: ReceiveCharge {
    let limit: Int
    var held = 0
    init(limit: Int) { self.limit = limit }
    func resize(to bytes: Int) -> Bool {
      guard bytes <= limit else { return false }
      held = bytes
      return true
    }
  }

  static func frame(_ kind: Frame.Kind) -> [UInt8] {
    var frame = Frame()
    frame.kind = kind
    return FrameReader.encode(frame)
  }

  static func call(_ id: UInt64) -> [UInt8] {
    var call = Call()
    call.id = id
    call.method = "/m"
    return frame(.call(call))
  }

  static func ping(_ nonce: UInt64) -> [UInt8] {
    var ping = Ping()
    ping.nonce = nonce
    return frame(.ping(ping))
  }

  @Test func aPingIsAnsweredWithItsNonceAndNeverDelivered() throws {
    var reader = FrameReader(maxFrameSize: 1024, clock: { 1 })
    let bytes = Self.ping(42) + Self.call(7)
    #expect(bytes.withUnsafeBytes { reader.append($0) })
    var sent: [[UInt8]] = []
    var delivered = 0
    guard case .frame(let frame) = reader.next(delivered: &delivered, send: { sent.append($0) }) else {
      Issue.record("no frame")
      return
    }
    guard case .call(let call) = frame.kind else {
      Issue.record("not the call")
      return
    }
    #expect(call.id == 7)
    #expect(delivered == 2)
    var pong = Pong()
    pong.nonce = 42
    var answer = Frame()
    answer.kind = .pong(pong)
    #expect(sent == [FrameReader.encode(answer)])
  }

  @Test func aTurnDeliversAtMostItsBudgetOfFrames() {
    var reader = FrameReader(maxFrameSize: 1024, clock: { 1 })
    let bytes = (1...UInt64(FrameReader.framesPerTurn + 5)).flatMap { Self.call($0) }
    #expect(bytes.withUnsafeBytes { reader.append($0) })
    var delivered = 0
    var frames = 0
    loop: while true {
      switch reader.next(delivered: &delivered, send: { _ in }) {
      case .frame: frames += 1
      case .turnSpent: break loop
      case .needMore, .failed:
        Issue.record("stopped early")
        break loop
      }
    }
    #expect(frames == FrameReader.framesPerTurn)
    // The next turn starts its count again and gets the rest.
    delivered = 0
    frames = 0
    while case .frame = reader.next(delivered: &delivered, send: { _ in }) { frames += 1 }
    #expect(frames == 5)
  }

  @Test func thePartialFrameClockRunsOnlyWhileAFrameIsUnfinished() {
    var now: UInt64 = 100
    var reader = FrameReader(maxFrameSize: 1024, clock: { now })
    let call = Self.call(1)
    var delivered = 0
    #expect(call.prefix(3).withUnsafeBytes { reader.append($0) })
    guard case .needMore = reader.next(delivered: &delivered, send: { _ in }) else {
      Issue.record("expected needMore")
      return
    }
    #expect(reader.partialFrameSince == 100)
    now = 200
    #expect(call.dropFirst(3).prefix(1).withUnsafeBytes { reader.append($0) })
    _ = reader.next(delivered: &delivered, send: { _ in })
    #expect(reader.partialFrameSince == 100)  // the same frame, still unfinished
    #expect(call.dropFirst(4).withUnsafeBytes { reader.append($0) })
    guard case .frame = reader.next(delivered: &delivered, send: { _ in }) else {
      Issue.record("expected the frame")
      return
    }
    _ = reader.next(delivered: &delivered, send: { _ in })
    #expect(reader.partialFrameSince == nil)
  }

  @Test func theChargeFollowsWhatIsHeldAndARefusalDropsIt() {
    let charge = Charge(limit: 100_000)
    var reader = FrameReader(maxFrameSize: 1 << 20, charge: charge, clock: { 1 })
    // A 4-byte prefix announcing 512 KiB, then 10 KiB of it.
    let prefix: [UInt8] = [0, 8, 0, 0]
    #expect(prefix.withUnsafeBytes { reader.append($0) })
    var delivered = 0
    _ = reader.next(delivered: &delivered, send: { _ in })
    let chunk = [UInt8](repeating: 1, count: 10_000)
    #expect(chunk.withUnsafeBytes { reader.append($0) })
    #expect(charge.held >= 10_000)
    // Growing past the budget is refused: nothing is held any more.
    let big = [UInt8](repeating: 1, count: 200_000)
    #expect(!big.withUnsafeBytes { reader.append($0) })
    #expect(charge.held == 0)
    #expect(reader.partialFrameSince == nil)
  }

  @Test func aFrameOverTheLimitFails() {
    var reader = FrameReader(maxFrameSize: 1024, frameLimit: 4, clock: { 1 })
    let call = Self.call(1)
    #expect(call.withUnsafeBytes { reader.append($0) })
    var delivered = 0
    guard case .failed(.tooLarge) = reader.next(delivered: &delivered, send: { _ in }) else {
      Issue.record("expected tooLarge")
      return
    }
  }
}
