/// Splits a byte stream into frame bodies: a 4-byte big-endian length, then that many
/// bytes.
///
/// The length is checked against the limit as soon as the 4 bytes are in, before any of
/// the body is buffered, so a hostile length cannot make the peer allocate; and a large
/// body grows as its bytes arrive, never to its announced length up front, so what a
/// connection holds (`heldBytes`) is what it was sent and can be charged to a budget.
public struct FrameDecoder: Sendable {
  /// The largest body the connection may ever send; docs/protocol.md §2's default is 4 MiB.
  public let maxFrameSize: Int
  /// The largest body accepted now, at most `maxFrameSize`: a server keeps it small until
  /// the connection has shown a credential that may send large frames.
  public var frameLimit: Int {
    didSet { frameLimit = min(max(1, frameLimit), maxFrameSize) }
  }
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
  /// The announced length of the large body being filled: its storage never grows past it.
  private var bodyLength = 0

  /// - Parameter frameLimit: the limit to start with (default `maxFrameSize`).
  public init(
    maxFrameSize: Int = ProtocolDefaults.maxFrameSize, frameLimit: Int? = nil,
    largeBodyBytes: Int = FrameDecoder.largeBodyBytes
  ) {
    self.maxFrameSize = maxFrameSize
    self.frameLimit = min(max(1, frameLimit ?? maxFrameSize), maxFrameSize)
    largeBodyThreshold = max(1, largeBodyBytes)
  }

  /// Memory held for frames not yet returned: the buffer's and the large body's storage
  /// (not only the bytes in them), for a budget to charge.
  public var heldBytes: Int { buffer.capacity + body.capacity }

  /// True while bytes of an unfinished frame are held: the partial-frame timeout runs.
  public var hasPartialFrame: Bool { bodyRemaining > 0 || readIndex < buffer.count }

  /// Bytes held but not yet returned as frames.
  public var bufferedCount: Int { buffer.count - readIndex + body.count }

  public mutating func append(_ bytes: UnsafeRawBufferPointer) {
    var rest = bytes
    if bodyRemaining > 0 {
      let taken = min(bodyRemaining, rest.count)
      growBody(toHold: body.count + taken)
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
    if UInt64(length) > UInt64(frameLimit) {
      throw .tooLarge(length: length, limit: frameLimit)
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

  /// Moves the body's first bytes out of the buffer into `body`. Its storage grows as the
  /// rest arrives (`growBody`), not to the announced length at once: a peer that announces
  /// 4 MiB and sends a few bytes must not hold 4 MiB of the server's memory (reserved
  /// pages were touched once the bytes came, and a budget must see what is really held).
  private mutating func startLargeBody(length: Int, from start: Int) {
    bodyLength = length
    growBody(toHold: buffer.count - start)
    body.append(contentsOf: buffer[start..<buffer.count])
    bodyRemaining = length - body.count
    bodyPending = true
    readIndex = buffer.count
    releaseIfDrained()
  }

  /// Makes room for `count` bytes of the body: doubling (so the copies cost at most the
  /// body's size once more), never past the announced length, never less than
  /// `largeBodyThreshold` to start with.
  private mutating func growBody(toHold count: Int) {
    guard count > body.capacity else { return }
    let doubled = max(body.capacity * 2, largeBodyThreshold)
    body.reserveCapacity(min(bodyLength, max(count, doubled)))
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
    out.appendBigEndianLength(UInt32(truncatingIfNeeded: body.count))
    out.append(contentsOf: body)
    return out
  }
}
