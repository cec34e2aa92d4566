/// Splits a byte stream into frame bodies: a 4-byte big-endian length, then that many
/// bytes.
///
/// The length is checked against the limit as soon as the 4 bytes are in, before any of
/// the body is buffered, so a hostile length cannot make the peer allocate.
public struct FrameDecoder: Sendable {
  /// The largest body accepted; PROTOCOL.md's default is 4 MiB.
  public let maxFrameSize: Int
  /// Bodies at least this long are gathered in an array of their own (`body`) instead of
  /// the shared buffer: a 2 MiB frame was otherwise copied twice more on the event loop
  /// (the buffer growing, then the body cut out of it), each copy into freshly faulted
  /// pages, and those turns held every other connection of the loop for milliseconds.
  public static let largeBodyBytes = 64 * 1024
  /// `largeBodyBytes`, unless a fuzz target or a test lowers it to reach both paths with
  /// small inputs.
  private let largeBodyThreshold: Int

  private var buffer: [UInt8] = []
  private var readIndex = 0
  /// A large body being filled, and how many of its bytes are still to come.
  private var body: [UInt8] = []
  private var bodyRemaining = 0
  private var bodyPending = false

  public init(maxFrameSize: Int = 4 * 1024 * 1024, largeBodyBytes: Int = FrameDecoder.largeBodyBytes) {
    self.maxFrameSize = maxFrameSize
    largeBodyThreshold = max(1, largeBodyBytes)
  }

  /// True while bytes of an unfinished frame are held: the partial-frame timeout runs.
  public var hasPartialFrame: Bool { bodyRemaining > 0 || readIndex < buffer.count }

  /// Bytes held but not yet returned as frames.
  public var bufferedCount: Int { buffer.count - readIndex + body.count }

  public mutating func append(_ bytes: UnsafeRawBufferPointer) {
    var rest = bytes
    if bodyRemaining > 0 {
      let taken = min(bodyRemaining, rest.count)
      body.append(contentsOf: UnsafeRawBufferPointer(rebasing: rest[..<taken]))
      bodyRemaining -= taken
      rest = UnsafeRawBufferPointer(rebasing: rest[taken...])
    }
    guard !rest.isEmpty else { return }
    compactIfWorthIt()
    buffer.append(contentsOf: rest)
  }

  public mutating func append(_ bytes: [UInt8]) {
    bytes.withUnsafeBytes { append($0) }
  }

  /// The next complete frame body, or nil when more bytes are needed.
  /// - Throws: `FrameError.emptyFrame` or `.tooLarge` as soon as the prefix shows it.
  public mutating func next() throws(FrameError) -> [UInt8]? {
    if bodyPending {
      // A large body comes before anything in the buffer, which arrived after it.
      guard bodyRemaining == 0 else { return nil }
      defer {
        body = []
        bodyPending = false
      }
      return body
    }
    guard buffer.count - readIndex >= 4 else {
      releaseIfDrained()
      return nil
    }
    let length =
      UInt32(buffer[readIndex]) << 24 | UInt32(buffer[readIndex + 1]) << 16
      | UInt32(buffer[readIndex + 2]) << 8 | UInt32(buffer[readIndex + 3])
    if length == 0 { throw .emptyFrame }
    if UInt64(length) > UInt64(maxFrameSize) {
      throw .tooLarge(length: length, limit: maxFrameSize)
    }
    let start = readIndex + 4
    let end = start + Int(length)
    guard buffer.count >= end else {
      if Int(length) >= largeBodyThreshold { startLargeBody(length: Int(length), from: start) }
      return nil
    }
    let frame = Array(buffer[start..<end])
    readIndex = end
    releaseIfDrained()
    return frame
  }

  /// Moves the body's first bytes out of the buffer into `body`, sized for the whole of
  /// it (pages are only touched as bytes arrive, so a promise alone costs no memory).
  private mutating func startLargeBody(length: Int, from start: Int) {
    body.reserveCapacity(length)
    body.append(contentsOf: buffer[start..<buffer.count])
    bodyRemaining = length - body.count
    bodyPending = true
    readIndex = buffer.count
    releaseIfDrained()
  }

  /// Idle connections must not keep read buffers: drop the storage once all is consumed.
  private mutating func releaseIfDrained() {
    if readIndex == buffer.count, !buffer.isEmpty || buffer.capacity > 0 {
      buffer = []
      readIndex = 0
    }
  }

  private mutating func compactIfWorthIt() {
    if readIndex > 0, readIndex >= buffer.count / 2 {
      buffer.removeFirst(readIndex)
      readIndex = 0
    }
  }
}

/// Puts the 4-byte big-endian length in front of a frame body.
public enum FrameEncoder {
  public static func frame(_ body: [UInt8]) -> [UInt8] {
    var out = [UInt8]()
    out.reserveCapacity(body.count + 4)
    let n = UInt32(truncatingIfNeeded: body.count)
    out.append(UInt8(truncatingIfNeeded: n >> 24))
    out.append(UInt8(truncatingIfNeeded: n >> 16))
    out.append(UInt8(truncatingIfNeeded: n >> 8))
    out.append(UInt8(truncatingIfNeeded: n))
    out.append(contentsOf: body)
    return out
  }
}
