/// The incremental `anonauth/1` codec one connection uses, server or client, over any
/// byte stream: bytes in, frames out, with the frame size limit, the start of an
/// unfinished frame (for the partial-frame timeout), the charge of the bytes it holds to
/// a budget, and the frames-per-turn budget that keeps one busy peer from holding its
/// event loop. A Ping is answered here and never reaches the owner: liveness is the
/// transport's business. Confined to the connection's thread.
public struct FrameReader {
  /// What `next` found.
  public enum Next {
    /// A frame for the owner (never a Ping).
    case frame(Frame)
    /// Everything complete was delivered; the rest of the bytes are still to come.
    case needMore
    /// This turn delivered `framesPerTurn` frames: the owner gives the rest of its work
    /// to the loop's next turn.
    case turnSpent
    /// The bytes stopped being frames: the owner says `GoAway` (or fails) and closes.
    case failed(FrameError)
  }

  /// Frames one connection may decode in one turn of its loop before it yields.
  public static let framesPerTurn = 64

  private var decoder: FrameDecoder
  /// Where the memory the decoder holds is charged; nil: nowhere.
  private let charge: (any ReceiveCharge)?
  /// The connection's monotonic clock, in nanoseconds.
  private let clock: () -> UInt64
  private let largeBodyBytes: Int

  /// When the frame now being received began, if one is unfinished and `next` last
  /// said `needMore`: complete frames waiting for their turn are not late.
  public private(set) var partialFrameSince: UInt64?

  /// - Parameters:
  ///   - frameLimit: the largest frame accepted until it is raised (default `maxFrameSize`).
  ///   - charge: the budget the held bytes are charged to.
  ///   - clock: monotonic nanoseconds, for `partialFrameSince`.
  ///   - largeBodyBytes: the decoder's large-body threshold; a fuzz target lowers it.
  public init(
    maxFrameSize: Int, frameLimit: Int? = nil, charge: (any ReceiveCharge)? = nil,
    clock: @escaping () -> UInt64, largeBodyBytes: Int = FrameDecoder.largeBodyBytes
  ) {
    decoder = FrameDecoder(maxFrameSize: maxFrameSize, frameLimit: frameLimit, largeBodyBytes: largeBodyBytes)
    self.largeBodyBytes = largeBodyBytes
    self.charge = charge
    self.clock = clock
  }

  /// The largest frame the peer may send now (at most `maxFrameSize`); raising it takes
  /// effect from the next length prefix read.
  public var frameLimit: Int {
    get { decoder.frameLimit }
    set { decoder.frameLimit = newValue }
  }

  /// Takes bytes read from the stream. Returns false when the budget refuses what the
  /// reader would then hold: the bytes held are dropped at once (they were never going
  /// to be served) and the owner fails the connection with `FrameError.overBudget`.
  public mutating func append(_ bytes: UnsafeRawBufferPointer) -> Bool {
    decoder.append(bytes)
    guard let charge, !charge.resize(to: decoder.heldBytes) else { return true }
    reset()
    return false
  }

  /// The next frame, unless `delivered` (the frames of this turn so far) reached
  /// `framesPerTurn`. A Ping is answered through `send` (the Pong's bytes) and counted.
  public mutating func next(delivered: inout Int, send: ([UInt8]) -> Void) -> Next {
    while true {
      if delivered >= Self.framesPerTurn {
        partialFrameSince = nil
        return .turnSpent
      }
      let body: [UInt8]?
      do {
        body = try decoder.next()
      } catch {
        return .failed(error)
      }
      // The frame leaves the charge before the owner charges what it keeps of it (a
      // call's payload), so that the same bytes are never counted twice.
      _ = charge?.resize(to: decoder.heldBytes)
      guard let body else {
        partialFrameSince = decoder.hasPartialFrame ? (partialFrameSince ?? clock()) : nil
        return .needMore
      }
      partialFrameSince = nil
      delivered += 1
      guard let frame = try? Frame(serializedBytes: body) else {
        return .failed(.malformed("frame does not parse"))
      }
      guard case .ping(let ping) = frame.kind else { return .frame(frame) }
      var pong = Pong()
      pong.nonce = ping.nonce
      var answer = Frame()
      answer.kind = .pong(pong)
      send(Self.encode(answer))
    }
  }

  /// Drops what is held and gives the charge back (the connection closed or failed).
  public mutating func reset() {
    decoder = FrameDecoder(
      maxFrameSize: decoder.maxFrameSize, frameLimit: decoder.frameLimit, largeBodyBytes: largeBodyBytes)
    partialFrameSince = nil
    _ = charge?.resize(to: 0)
  }

  /// A frame's bytes on the wire: its length prefix and its body.
  public static func encode(_ frame: Frame) -> [UInt8] {
    FrameEncoder.frame(frame.serializedBytes())
  }
}
