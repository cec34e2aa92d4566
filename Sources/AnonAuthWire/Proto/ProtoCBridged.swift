internal import CProtobufC

/// A Swift message type paired with the protobuf-c struct that encodes and decodes it.
///
/// The generated code implements the per-type parts (which C functions, which fields);
/// `ProtoBridge` holds the one copy of the memory handling around them.
protocol ProtoCBridged: ProtoMessage {
  /// The protobuf-c struct, for example `Anonauth__Rpc__V1__Call`.
  associatedtype CMessage

  /// `xxx__init`: Swift cannot import the `XXX__INIT` macros.
  static func cInit(_ message: UnsafeMutablePointer<CMessage>)
  /// `xxx__get_packed_size`.
  static func cPackedSize(_ message: UnsafePointer<CMessage>) -> Int
  /// `xxx__pack`; `out` has room for `cPackedSize` bytes. Returns the bytes written.
  static func cPack(_ message: UnsafePointer<CMessage>, into out: UnsafeMutablePointer<UInt8>)
    -> Int
  /// `xxx__unpack`: nil when the bytes are not a valid encoding.
  static func cUnpack(
    _ bytes: UnsafeBufferPointer<UInt8>, allocator: UnsafeMutablePointer<ProtobufCAllocator>
  ) -> UnsafeMutablePointer<CMessage>?
  /// `xxx__free_unpacked`, with the allocator that unpacked it.
  static func cFreeUnpacked(
    _ message: UnsafeMutablePointer<CMessage>,
    allocator: UnsafeMutablePointer<ProtobufCAllocator>
  )

  /// Writes this message into an initialized struct; everything it points to is owned by
  /// `arena`.
  func fill(_ message: UnsafeMutablePointer<CMessage>, arena: ProtoArena)

  /// Copies an unpacked struct into Swift values; `reader` knows the exact string lengths.
  init(cMessage message: UnsafePointer<CMessage>, reader: ProtoUnpackReader)
    throws(ProtoDecodingError)

  /// The field numbers of this message and which hold messages, for the pre-scan.
  static var protoScanSchema: ProtoScanSchema { get }

  /// The most this type may cost to decode (`ProtoPreScan.costLimit`; `Frame` has its own).
  static var decodeCostLimit: Int { get }

  /// The linear check every decode runs before protobuf-c allocates (`ProtoPreScan`).
  static func preScan(_ bytes: [UInt8], tally: inout ProtoPreScan.Tally) -> ProtoPreScan.Verdict
}

extension ProtoCBridged {
  /// The generic pre-scan; `Frame` adds its metadata limits (`FramePreScan`).
  static var decodeCostLimit: Int { ProtoPreScan.costLimit(protoScanSchema) }

  static func preScan(_ bytes: [UInt8], tally: inout ProtoPreScan.Tally) -> ProtoPreScan.Verdict {
    ProtoPreScan.scan(bytes, schema: protoScanSchema, limit: decodeCostLimit, tally: &tally)
  }
}

/// Encoding and decoding through protobuf-c, shared by every generated type.
enum ProtoBridge {
  /// protobuf-c keeps sizes in `unsigned` inside its parser, so larger inputs could wrap.
  /// Frames are limited to a few MiB long before this matters.
  static let maxInputCount = Int(UInt32.max)

  static func encode<M: ProtoCBridged>(_ message: M) -> [UInt8] {
    ProtoArena.with { arena in
      let cMessage = arena.message(message)
      let size = M.cPackedSize(cMessage)
      guard size > 0 else { return [] }
      return [UInt8](unsafeUninitializedCapacity: size) { buffer, initialized in
        guard let out = buffer.baseAddress else { return }
        let written = M.cPack(cMessage, into: out)
        assert(written == size, "protobuf-c packed \(written) bytes, announced \(size)")
        initialized = min(written, size)
      }
    }
  }

  /// Decodes `bytes` after the pre-scan accepted them. `allocations` records what
  /// protobuf-c allocates; tests and the fuzz target pass their own to count it.
  static func decode<M: ProtoCBridged>(
    _ bytes: [UInt8], as _: M.Type = M.self,
    allocations: ProtoUnpackAllocations = ProtoUnpackAllocations()
  ) throws(ProtoDecodingError) -> M {
    guard bytes.count <= maxInputCount else { throw .malformed }
    var tally = ProtoPreScan.Tally()
    guard M.preScan(bytes, tally: &tally) == .withinLimits else { throw .malformed }
    let result: Result<M, ProtoDecodingError> = withExtendedLifetime(allocations) {
      var allocator = allocations.makeAllocator()
      return withUnsafeMutablePointer(to: &allocator) { allocatorPointer in
        withNonNilBaseAddress(bytes) { buffer in
          guard let cMessage = M.cUnpack(buffer, allocator: allocatorPointer) else {
            return .failure(.malformed)
          }
          defer { M.cFreeUnpacked(cMessage, allocator: allocatorPointer) }
          let reader = ProtoUnpackReader(allocations: allocations)
          return Result { () throws(ProtoDecodingError) in
            try M(cMessage: cMessage, reader: reader)
          }
        }
      }
    }
    assert(allocations.isEmpty, "protobuf-c left \(M.protoMessageName) allocations behind")
    return try result.get()
  }

  /// protobuf-c reads nothing when the length is 0, but an empty array may have no
  /// storage at all; hand it a valid pointer anyway rather than rely on that.
  private static func withNonNilBaseAddress<R>(
    _ bytes: [UInt8], _ body: (UnsafeBufferPointer<UInt8>) -> R
  ) -> R {
    if bytes.isEmpty {
      var placeholder: UInt8 = 0
      return withUnsafePointer(to: &placeholder) { body(UnsafeBufferPointer(start: $0, count: 0)) }
    }
    return bytes.withUnsafeBufferPointer(body)
  }
}
