/// One linear pass over a message's wire bytes before protobuf-c unpacks it: counts its
/// fields by shape, nested messages included, and refuses the message when decoding it
/// would cost more than `CallLimits` allows.
///
/// protobuf-c allocates every unknown field, every string and every nested message, and
/// the bridge copies each into a Swift value, so a 4 MiB message of two-byte fields is
/// two million allocations. The scan itself allocates nothing and reads each byte once;
/// nesting is as deep as the schema (proto messages here are not recursive), and
/// unknown length-delimited fields are skipped whole, not looked into.
public enum ProtoPreScan {
  /// What the scan found. Every refusal becomes `ProtoDecodingError.malformed`, so the
  /// caller answers as for any other message it cannot decode.
  public enum Verdict: Equatable, Sendable {
    case withinLimits
    /// Metadata over `CallLimits` in a `Frame`'s call: entries and bytes counted so far
    /// (the scan stops early).
    case metadataOverLimits(entries: Int, bytes: Int)
    /// Over the decode cost bound of the message type (`CallLimits.maxDecodeCost`, or a
    /// smaller one): fields, elements and nested messages.
    case tooManyFields
    /// More than `CallLimits.maxUnknownFields` fields this build does not know.
    case tooManyUnknownFields
    /// A singular message field given twice in one message. Protobuf merges the two, and
    /// protobuf-c does it by concatenating their repeated fields into new arrays: a few
    /// thousand repeats would copy and keep gigabytes. No encoder writes this.
    case repeatedSingularMessage
    /// Bytes that are not a protobuf encoding (protobuf-c rejects them too).
    case unreadable
  }

  /// What the scan counted, for tests and the fuzz target that check the decode's
  /// allocations against it.
  public struct Tally: Equatable, Sendable {
    /// Fields, packed elements and nested messages, weighted as `CallLimits.maxDecodeCost`
    /// says.
    public var cost = 0
    /// Fields whose number the schema does not declare, at any depth.
    public var unknownFields = 0
    /// Occurrences of a field, at any depth: an upper bound on the number of values
    /// protobuf-c allocates.
    public var occurrences = 0

    public init() {}
  }

  /// The decode cost bound of a message type: `CallLimits.maxDecodeCost` for one that
  /// may legitimately carry many values, `CallLimits.maxFixedShapeDecodeCost` otherwise.
  static func costLimit(_ schema: ProtoScanSchema) -> Int {
    schema.mayRepeat ? CallLimits.maxDecodeCost : CallLimits.maxFixedShapeDecodeCost
  }

  /// Scans `bytes` as a message of `schema`, with a cost bound of `limit`. `visit` sees
  /// every field of every message with the schema it belongs to, and may refuse: the
  /// hook for limits on particular fields (`FramePreScan`).
  static func scan(
    _ bytes: [UInt8], schema: ProtoScanSchema, limit: Int? = nil, tally: inout Tally,
    visit: (ProtoScanSchema, ProtoWireReader.Field) -> Verdict? = { _, _ in nil }
  ) -> Verdict {
    let limit = limit ?? costLimit(schema)
    return bytes.withUnsafeBytes { walk($0, schema: schema, limit: limit, tally: &tally, visit: visit) }
      ?? .withinLimits
  }

  private static func walk(
    _ bytes: UnsafeRawBufferPointer, schema: ProtoScanSchema, limit: Int, tally: inout Tally,
    visit: (ProtoScanSchema, ProtoWireReader.Field) -> Verdict?
  ) -> Verdict? {
    var reader = ProtoWireReader(bytes: bytes)
    // The singular message fields seen in this message, by number (all are below 64).
    var singularSeen: UInt64 = 0
    while !reader.isAtEnd {
      guard let field = reader.nextField() else { return .unreadable }
      tally.occurrences += 1
      switch schema.field(field.number) {
      case .unknown:
        tally.unknownFields += 1
        tally.cost += 1
        if tally.unknownFields > CallLimits.maxUnknownFields { return .tooManyUnknownFields }
      case .plain:
        tally.cost += 1
      case .text:
        tally.cost += 2
      case .packed(let width):
        tally.cost += field.payload.map { elements(in: $0, width: width) } ?? 1
      case .message(let nested, let repeated):
        if !repeated {
          // The generator refuses singular message fields numbered 64 and up.
          let bit: UInt64 = field.number < 64 ? 1 << field.number : 0
          if singularSeen & bit != 0 { return .repeatedSingularMessage }
          singularSeen |= bit
        }
        tally.cost += nested.occurrenceCost
        if tally.cost > limit { return .tooManyFields }
        if let payload = field.payload,
          let verdict = walk(payload, schema: nested, limit: limit, tally: &tally, visit: visit)
        {
          return verdict
        }
      }
      if tally.cost > limit { return .tooManyFields }
      if let verdict = visit(schema, field) { return verdict }
    }
    return nil
  }

  /// The elements of a packed run: one per varint (each ends in a byte below 0x80), or
  /// the bytes over the fixed width.
  private static func elements(in payload: UnsafeRawBufferPointer, width: Int) -> Int {
    guard width > 0 else {
      var count = 0
      for byte in payload where byte < 0x80 { count += 1 }
      return max(1, count)
    }
    return max(1, payload.count / width)
  }
}
