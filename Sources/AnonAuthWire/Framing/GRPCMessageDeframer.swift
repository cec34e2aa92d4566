/// One message of a gRPC body, cut from its length prefix.
public struct GRPCMessage: Equatable, Sendable {
  /// The prefix's first byte: 0 uncompressed, 1 compressed (by `grpc-encoding`); any
  /// other value is not gRPC.
  public var flags: UInt8
  public var bytes: [UInt8]

  public init(flags: UInt8, bytes: [UInt8]) {
    self.flags = flags
    self.bytes = bytes
  }
}

/// Cuts a gRPC body into messages as its bytes arrive, and frames messages: each message
/// is a 5-byte prefix (a flag byte, then the length as a big-endian UInt32) and that
/// many bytes. The one gRPC prefix codec, for the server's request streams and the
/// client's responses alike.
///
/// Every message's length is checked against `limit` as soon as its prefix is complete,
/// before any of the message is kept, so a peer cannot make the reader buffer more than
/// the limit for one message (docs/protocol.md §12: a longer message is answered
/// `RESOURCE_EXHAUSTED` from its length prefix). The flag byte is the caller's to judge,
/// on the whole message.
public struct GRPCMessageDeframer: Sendable {
  /// The largest message length accepted; may be raised between calls of `append`
  /// (an admin-key call passed its check).
  public var limit: Int
  /// The length of each message's prefix: a flag byte and a big-endian UInt32.
  public static let prefixBytes = 5
  private var prefix: [UInt8] = []
  /// The unfinished message: its flags, the bytes so far, and how many are still to come
  /// (kept apart, so the buffer grows in place).
  private var inMessage = false
  private var flags: UInt8 = 0
  private var body: [UInt8] = []
  private var remaining = 0

  public init(limit: Int) {
    self.limit = limit
  }

  /// A message whose prefix announces more than `limit` bytes.
  public struct TooLarge: Error, Equatable, Sendable {
    public let length: Int
    public let limit: Int

    public init(length: Int, limit: Int) {
      self.length = length
      self.limit = limit
    }
  }

  /// Whether bytes of an unfinished message (or prefix) are held: a body that ends here
  /// ended mid-message.
  public var isMidMessage: Bool { !prefix.isEmpty || inMessage }

  /// Takes the next bytes of the body; returns the messages they complete, in order.
  /// Once it has thrown, the deframer is not used again (the call is answered).
  public mutating func append(_ bytes: UnsafeRawBufferPointer) throws(TooLarge) -> [GRPCMessage] {
    var messages: [GRPCMessage] = []
    var index = 0
    while index < bytes.count {
      if inMessage {
        let take = min(remaining, bytes.count - index)
        growBody(toHold: body.count + take)
        body.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[index..<index + take]))
        index += take
        remaining -= take
        if remaining == 0 {
          messages.append(GRPCMessage(flags: flags, bytes: body))
          body = []
          inMessage = false
        }
        continue
      }
      prefix.append(bytes[index])
      index += 1
      guard prefix.count == 5 else { continue }
      let length = Int(prefix[1]) << 24 | Int(prefix[2]) << 16 | Int(prefix[3]) << 8 | Int(prefix[4])
      let messageFlags = prefix[0]
      prefix.removeAll(keepingCapacity: true)
      guard length <= limit else { throw TooLarge(length: length, limit: limit) }
      if length == 0 {
        messages.append(GRPCMessage(flags: messageFlags, bytes: []))
      } else {
        inMessage = true
        flags = messageFlags
        remaining = length
      }
    }
    return messages
  }

  /// Bytes of memory the unfinished message holds (its buffer's capacity): what a
  /// receive budget must see, which can be more than the bytes received.
  public var heldCapacity: Int { body.capacity }

  /// Makes room for `count` bytes of the message as they arrive: doubling (the copies
  /// cost at most the message's size once more), never past the announced length. The
  /// announced length is not reserved up front: a prefix alone, a few bytes sent, must
  /// not make the server hold up to `limit` for each stream.
  private mutating func growBody(toHold count: Int) {
    guard count > body.capacity else { return }
    body.reserveCapacity(min(body.count + remaining, max(count, body.capacity * 2, 256)))
  }

  /// `payload` with its 5-byte prefix (flag 0: not compressed), as a message goes on the
  /// wire. A payload past UInt32.max bytes (never made: messages are held to the frame
  /// limits, a few MiB) announces UInt32.max, which every reader's limit refuses from
  /// the prefix, rather than a wrapped length that would desynchronize the stream.
  public static func frame(_ payload: [UInt8]) -> [UInt8] {
    var framed: [UInt8] = []
    framed.reserveCapacity(payload.count + 5)
    framed.append(0)
    framed.appendBigEndianLength(UInt32(clamping: payload.count))
    framed.append(contentsOf: payload)
    return framed
  }
}
