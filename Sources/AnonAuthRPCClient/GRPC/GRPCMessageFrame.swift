import AnonAuthWire

/// gRPC's length-prefixed message on an HTTP/2 stream: one flag byte (1: compressed),
/// four bytes of length (big-endian), then the message; the codec is AnonAuthWire's
/// `GRPCMessageDeframer`, the server's too. The client never compresses, so it sends
/// flag 0 and does not advertise `grpc-accept-encoding`: a server that follows the
/// protocol then never sends it a compressed message either.
public enum GRPCMessageFrame {
  /// The prefix's size.
  public static let prefixSize = GRPCMessageDeframer.prefixBytes

  /// `message` with its prefix, uncompressed.
  public static func encode(_ message: [UInt8]) -> [UInt8] {
    GRPCMessageDeframer.frame(message)
  }
}

/// Collects a response stream's DATA bytes and hands back the one message of a unary
/// reply. Hostile or broken input ends in an error, never a trap: each message's
/// declared length is checked against `maxMessageSize` from its prefix, before any of
/// it is kept, as the server checks requests (`GRPCMessageDeframer`).
public struct GRPCMessageReader: Sendable {
  /// Why a response body is not one message.
  public enum Failure: Error, Equatable, Sendable {
    /// The compressed flag on a message the client never asked to be compressed.
    case compressed
    /// A flag byte other than 0 or 1.
    case badFlag(UInt8)
    /// The declared length is over the limit.
    case tooLarge(Int)
    /// The body ended inside a prefix or a message.
    case truncated
    /// A unary reply carried no message.
    case missing
    /// A unary reply carried more than one message.
    case extra
  }

  public let maxMessageSize: Int
  private var deframer: GRPCMessageDeframer
  private var first: [UInt8]?
  private var failure: Failure?

  public init(maxMessageSize: Int) {
    self.maxMessageSize = maxMessageSize
    deframer = GRPCMessageDeframer(limit: maxMessageSize)
  }

  /// Appends a chunk of the body; once the body is unusable, chunks are dropped.
  public mutating func append(_ bytes: UnsafeRawBufferPointer) {
    guard failure == nil else { return }
    let messages: [GRPCMessage]
    do {
      messages = try deframer.append(bytes)
    } catch {
      failure = .tooLarge(error.length)
      return
    }
    for message in messages {
      switch message.flags {
      case 0: break
      case 1: failure = .compressed
      case let other: failure = .badFlag(other)
      }
      if failure == nil, first != nil { failure = .extra }
      guard failure == nil else {
        first = nil
        return
      }
      first = message.bytes
    }
  }

  /// The one message of the body, once the stream has ended.
  public func message() throws(Failure) -> [UInt8] {
    if let failure { throw failure }
    // Bytes after a whole message are a second one, complete or not.
    if deframer.isMidMessage { throw first == nil ? .truncated : .extra }
    guard let first else { throw .missing }
    return first
  }
}
