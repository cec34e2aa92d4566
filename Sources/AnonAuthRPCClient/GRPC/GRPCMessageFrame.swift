/// gRPC's length-prefixed message on an HTTP/2 stream: one flag byte (1: compressed),
/// four bytes of length (big-endian), then the message. The client never compresses, so
/// it sends flag 0 and does not advertise `grpc-accept-encoding`: a server that follows
/// the protocol then never sends it a compressed message either.
public enum GRPCMessageFrame {
  /// The prefix's size.
  public static let prefixSize = 5

  /// `message` with its prefix, uncompressed.
  public static func encode(_ message: [UInt8]) -> [UInt8] {
    var out: [UInt8] = []
    out.reserveCapacity(prefixSize + message.count)
    let length = UInt32(clamping: message.count)
    out.append(0)
    out.append(UInt8(truncatingIfNeeded: length >> 24))
    out.append(UInt8(truncatingIfNeeded: length >> 16))
    out.append(UInt8(truncatingIfNeeded: length >> 8))
    out.append(UInt8(truncatingIfNeeded: length))
    out.append(contentsOf: message)
    return out
  }
}

/// Collects a response stream's DATA bytes and hands back the one message of a unary
/// reply. Hostile or broken input ends in an error, never a trap: the declared length is
/// checked against `maxMessageSize` before anything is kept.
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
  private var buffer: [UInt8] = []
  private var failure: Failure?

  public init(maxMessageSize: Int) {
    self.maxMessageSize = maxMessageSize
  }

  /// Appends a chunk of the body; a chunk that makes the body unusable is dropped.
  public mutating func append(_ bytes: UnsafeRawBufferPointer) {
    guard failure == nil else { return }
    buffer.append(contentsOf: bytes)
    // Fail early on a prefix that declares too much, before its message arrives.
    if buffer.count >= GRPCMessageFrame.prefixSize, let declared = prefixFailure() {
      failure = declared
      buffer = []
    }
  }

  /// The one message of the body, once the stream has ended.
  public func message() throws(Failure) -> [UInt8] {
    if let failure { throw failure }
    guard !buffer.isEmpty else { throw .missing }
    guard buffer.count >= GRPCMessageFrame.prefixSize else { throw .truncated }
    if let failure = prefixFailure() { throw failure }
    let length = declaredLength()
    let end = GRPCMessageFrame.prefixSize + length
    guard buffer.count >= end else { throw .truncated }
    guard buffer.count == end else { throw .extra }
    return Array(buffer[GRPCMessageFrame.prefixSize..<end])
  }

  private func declaredLength() -> Int {
    Int(buffer[1]) << 24 | Int(buffer[2]) << 16 | Int(buffer[3]) << 8 | Int(buffer[4])
  }

  private func prefixFailure() -> Failure? {
    switch buffer[0] {
    case 0: break
    case 1: return .compressed
    case let other: return .badFlag(other)
    }
    let length = declaredLength()
    return length > maxMessageSize ? .tooLarge(length) : nil
  }
}
