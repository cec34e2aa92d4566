import Testing

@testable import AnonAuthWire

@Suite struct FramePreScanTests {
  func frame(entries: Int, valueBytes: Int = 1, method: String = "/m") -> [UInt8] {
    var call = Call()
    call.id = 7
    call.method = method
    for index in 0..<entries {
      call.metadata["k\(index)"] = String(repeating: "v", count: valueBytes)
    }
    var frame = Frame()
    frame.kind = .call(call)
    return frame.serializedBytes()
  }

  @Test func acceptsOrdinaryCalls() throws {
    let bytes = frame(entries: 4, valueBytes: 40)
    #expect(FramePreScan.scan(bytes) == .withinLimits)
    let decoded = try Frame(serializedBytes: bytes)
    guard case .call(let call) = decoded.kind else {
      Issue.record("not a call")
      return
    }
    #expect(call.metadata.count == 4)
  }

  @Test func acceptsExactlyTheLimits() throws {
    let bytes = frame(entries: CallLimits.maxMetadataEntries)
    #expect(FramePreScan.scan(bytes) == .withinLimits)
    _ = try Frame(serializedBytes: bytes)
  }

  @Test func refusesTooManyEntriesBeforeUnpacking() {
    let bytes = frame(entries: CallLimits.maxMetadataEntries + 1)
    #expect(FramePreScan.scan(bytes) != .withinLimits)
    #expect(throws: ProtoDecodingError.malformed) { try Frame(serializedBytes: bytes) }
  }

  @Test func refusesTooManyBytes() {
    let bytes = frame(entries: 1, valueBytes: CallLimits.maxMetadataBytes + 1)
    #expect(FramePreScan.scan(bytes) != .withinLimits)
    #expect(throws: ProtoDecodingError.malformed) { try Frame(serializedBytes: bytes) }
  }

  /// 359,000 empty entries (`1a 00`) in one call, the frame from the issue: refused
  /// after the 65th entry is counted.
  @Test func refusesTheIssuesFrame() {
    var call: [UInt8] = [0x08, 0x01]
    for _ in 0..<359_000 { call += [0x1a, 0x00] }
    var bytes: [UInt8] = [0x0a]
    ProtoVarint.append(UInt64(call.count), to: &bytes)
    bytes += call
    #expect(
      FramePreScan.scan(bytes)
        == .metadataOverLimits(entries: CallLimits.maxMetadataEntries + 1, bytes: 0))
    #expect(throws: ProtoDecodingError.malformed) { try Frame(serializedBytes: bytes) }
  }

  /// The call field twice in one frame: protobuf-c would merge the two calls (their
  /// metadata concatenated), so a frame may carry it once.
  @Test func refusesARepeatedCallField() {
    var call: [UInt8] = []
    for _ in 0..<40 { call += [0x1a, 0x00] }
    var one: [UInt8] = [0x0a]
    ProtoVarint.append(UInt64(call.count), to: &one)
    one += call
    #expect(FramePreScan.scan(one) == .withinLimits)
    #expect(FramePreScan.scan(one + one) == .repeatedSingularMessage)
  }

  /// Truncated or nonsensical bytes are refused (protobuf-c rejects them too), and never
  /// trap.
  @Test(
    arguments: [
      [0x0a], [0x0a, 0xff], [0x0a, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01],
      [0x0a, 0x05, 0x1a], [0x0b], [0x0a, 0x02, 0x1a, 0x7f], [0xff, 0xff],
    ] as [[UInt8]])
  func refusesGarbage(bytes: [UInt8]) {
    #expect(FramePreScan.scan(bytes) == .unreadable)
    #expect(throws: ProtoDecodingError.malformed) { try Frame(serializedBytes: bytes) }
  }

  @Test func acceptsTheEmptyFrame() {
    #expect(FramePreScan.scan([]) == .withinLimits)
  }
}
