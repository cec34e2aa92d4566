import Testing

@testable import AnonAuthWire

@Suite struct FrameDecoderTests {
  @Test func splitsFramesFedOneByteAtATime() throws {
    let stream = FrameEncoder.frame([1, 2, 3]) + FrameEncoder.frame([4]) + FrameEncoder.frame([5, 6])
    var decoder = FrameDecoder(maxFrameSize: 16)
    var frames: [[UInt8]] = []
    for byte in stream {
      decoder.append([byte])
      while let frame = try decoder.next() { frames.append(frame) }
    }
    #expect(frames == [[1, 2, 3], [4], [5, 6]])
    #expect(!decoder.hasPartialFrame)
  }

  @Test func reportsPartialFrame() throws {
    var decoder = FrameDecoder()
    decoder.append([0, 0, 0, 3, 9])
    #expect(try decoder.next() == nil)
    #expect(decoder.hasPartialFrame)
    decoder.append([9, 9])
    #expect(try decoder.next() == [9, 9, 9])
    #expect(!decoder.hasPartialFrame)
  }

  @Test func zeroLengthIsAnError() {
    var decoder = FrameDecoder()
    decoder.append([0, 0, 0, 0])
    #expect(throws: FrameError.emptyFrame) { try decoder.next() }
  }

  @Test(arguments: [(16, UInt32(17)), (4 * 1024 * 1024, UInt32(4 * 1024 * 1024 + 1))])
  func oversizeIsRefusedFromThePrefixAlone(limit: Int, length: UInt32) {
    var decoder = FrameDecoder(maxFrameSize: limit)
    decoder.append([
      UInt8(length >> 24), UInt8((length >> 16) & 0xff), UInt8((length >> 8) & 0xff),
      UInt8(length & 0xff),
    ])
    #expect(throws: FrameError.tooLarge(length: length, limit: limit)) { try decoder.next() }
  }

  @Test func acceptsExactlyTheLimit() throws {
    var decoder = FrameDecoder(maxFrameSize: 8)
    decoder.append(FrameEncoder.frame(Array(repeating: 7, count: 8)))
    #expect(try decoder.next()?.count == 8)
  }

  @Test func encoderWritesBigEndianLength() {
    #expect(FrameEncoder.frame(Array(repeating: 0, count: 258)).prefix(4) == [0, 0, 1, 2])
  }

  /// Large bodies (gathered apart from the shared buffer) mixed with small ones, the
  /// stream cut into pieces of every size from 1 byte to 100 KiB: the same frames in the
  /// same order, and nothing held at the end.
  @Test(arguments: [1, 7, 4096, 65_536, 100_000])
  func largeAndSmallFramesSurviveAnyCuts(piece: Int) throws {
    let large = FrameDecoder.largeBodyBytes
    let bodies: [[UInt8]] = [
      Array(repeating: 1, count: large), [2], (0..<(3 * large + 5)).map { UInt8(truncatingIfNeeded: $0) },
      Array(repeating: 4, count: large - 1), Array(repeating: 5, count: 2 * large), [6, 6],
    ]
    let stream = bodies.flatMap(FrameEncoder.frame)
    var decoder = FrameDecoder(maxFrameSize: 4 * large)
    var frames: [[UInt8]] = []
    var offset = 0
    while offset < stream.count {
      let end = min(stream.count, offset + piece)
      decoder.append(Array(stream[offset..<end]))
      offset = end
      while let frame = try decoder.next() { frames.append(frame) }
      if offset < stream.count { #expect(decoder.hasPartialFrame || decoder.bufferedCount == 0) }
    }
    #expect(frames == bodies)
    #expect(!decoder.hasPartialFrame)
    #expect(decoder.bufferedCount == 0)
  }

  @Test func aLargeFrameCutShortIsPartialAndCounted() throws {
    var decoder = FrameDecoder()
    let length = FrameDecoder.largeBodyBytes * 2
    decoder.append(FrameEncoder.frame(Array(repeating: 7, count: length)).prefix(1000).map { $0 })
    #expect(try decoder.next() == nil)
    #expect(decoder.hasPartialFrame)
    #expect(decoder.bufferedCount == 996)
    decoder.append(Array(repeating: 7, count: length - 996))
    #expect(try decoder.next() == Array(repeating: 7, count: length))
    #expect(try decoder.next() == nil)
    #expect(!decoder.hasPartialFrame)
  }

  /// A lowered threshold (as the fuzz target uses) cuts the same way: every frame from 1 to
  /// 80 bytes on either side of it, fed a byte at a time.
  @Test func aLoweredThresholdGivesTheSameFrames() throws {
    let bodies = (1...80).map { length in (0..<length).map { UInt8(truncatingIfNeeded: $0 &+ length) } }
    let stream = bodies.flatMap(FrameEncoder.frame)
    var decoder = FrameDecoder(maxFrameSize: 1024, largeBodyBytes: 32)
    var frames: [[UInt8]] = []
    for byte in stream {
      decoder.append([byte])
      while let frame = try decoder.next() { frames.append(frame) }
    }
    #expect(frames == bodies)
    #expect(!decoder.hasPartialFrame)
  }

  /// A peer that announces 4 MiB and sends 100 KiB makes the decoder hold about what it
  /// sent, not the announced length: the budget of partly received bytes charges
  /// `heldBytes`, and a trickle must not reserve the whole frame up front.
  @Test func aLargeBodyGrowsAsItsBytesArrive() throws {
    let length = 4 * 1024 * 1024
    var decoder = FrameDecoder(maxFrameSize: length)
    let prefix = [
      UInt8(length >> 24), UInt8((length >> 16) & 0xff), UInt8((length >> 8) & 0xff), UInt8(length & 0xff),
    ]
    decoder.append(prefix + Array(repeating: 1, count: 1000))
    #expect(try decoder.next() == nil)
    var sent = 1000
    while sent < 100 * 1024 {
      decoder.append(Array(repeating: 1, count: 4096))
      sent += 4096
      #expect(try decoder.next() == nil)
      // Doubling storage: never more than twice what arrived (and the first 64 KiB).
      #expect(decoder.heldBytes <= max(2 * sent, FrameDecoder.largeBodyBytes) + 4096)
    }
    #expect(decoder.heldBytes < length / 8)
    decoder.append(Array(repeating: 1, count: length - sent))
    #expect(try decoder.next()?.count == length)
    #expect(decoder.heldBytes == 0)
  }

  /// Growing never goes past the announced length, whatever the doubling would give.
  @Test func aLargeBodyNeverHoldsMoreThanItsLength() throws {
    let length = 3 * FrameDecoder.largeBodyBytes + 17
    var decoder = FrameDecoder(maxFrameSize: length)
    decoder.append(FrameEncoder.frame(Array(repeating: 9, count: length)).dropLast().map { $0 })
    #expect(try decoder.next() == nil)
    #expect(decoder.heldBytes < length + 4096)
    decoder.append([9])
    #expect(try decoder.next() == Array(repeating: 9, count: length))
  }

  /// A connection starts with a small limit (until an admin-key call passed): a frame over
  /// it is `tooLarge` with that limit; raised, the same frame is accepted; the limit never
  /// goes past `maxFrameSize`.
  @Test func theFrameLimitCanStartSmallAndBeRaised() throws {
    var small = FrameDecoder(maxFrameSize: 4096, frameLimit: 100)
    small.append(FrameEncoder.frame(Array(repeating: 3, count: 101)))
    #expect(throws: FrameError.tooLarge(length: 101, limit: 100)) { try small.next() }

    var raised = FrameDecoder(maxFrameSize: 4096, frameLimit: 100)
    raised.append(FrameEncoder.frame(Array(repeating: 3, count: 100)))
    #expect(try raised.next()?.count == 100)
    raised.frameLimit = 1_000_000
    #expect(raised.frameLimit == 4096)
    raised.append(FrameEncoder.frame(Array(repeating: 3, count: 4096)))
    #expect(try raised.next()?.count == 4096)
    #expect(FrameError.tooLarge(length: 1, limit: 0).goAwayReason == "FRAME_TOO_LARGE")
    #expect(FrameError.overBudget.goAwayReason == "RESOURCE_EXHAUSTED")
  }
}
