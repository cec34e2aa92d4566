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
}
