/// What the pre-scan (`ProtoPreScan`) knows of one message type: which field numbers it
/// declares, and which of them hold a nested message whose fields count too.
///
/// The generator writes one per message (`protoScanSchema`), next to the protobuf-c
/// bridge, from the same descriptors, so the scan and the decoder agree on every type.
final class ProtoScanSchema: Sendable {
  /// How one field number is laid out.
  enum Field: Sendable {
    /// Not declared: protobuf-c keeps it as an unknown field (an allocation each).
    case unknown
    /// A number, bool or enum: one per occurrence, stored in the message's own struct.
    case plain
    /// A string or bytes value: one per occurrence, and each costs protobuf-c an
    /// allocation and the bridge a Swift value, so it counts twice.
    case text(repeated: Bool)
    /// A repeated number: one occurrence may be a packed run of many. `width` is the
    /// bytes of one element, or 0 for varints.
    case packed(width: Int)
    /// A message (or a map entry): it is unpacked into a struct of its own, and its
    /// fields are scanned too. A singular one may occur once: protobuf-c merges repeats
    /// by copying their repeated fields into a fresh array each time, quadratic in the
    /// repeats.
    case message(ProtoScanSchema, repeated: Bool)
  }

  /// Indexed by field number; numbers past the end are unknown.
  private let fields: [Field]
  /// What one occurrence of this message adds to a decode's cost (see
  /// `CallLimits.maxDecodeCost`): 1, plus 1 per declared field, because protobuf-c
  /// allocates a struct with a slot per field and the Swift value has a property per
  /// field even when the wire carries none of them.
  let occurrenceCost: Int
  /// Whether a legitimate encoding can hold many values: a repeated field or a map,
  /// here or in a nested message. One that cannot holds at most a few dozen, and gets
  /// the much smaller bound `CallLimits.maxFixedShapeDecodeCost`.
  let mayRepeat: Bool

  init(_ declared: [Int: Field]) {
    var fields = [Field](repeating: .unknown, count: (declared.keys.max() ?? 0) + 1)
    for (number, field) in declared where number > 0 {
      fields[number] = field
    }
    self.fields = fields
    occurrenceCost = 1 + declared.count
    mayRepeat = declared.values.contains { field in
      switch field {
      case .text(repeated: true), .packed, .message(_, repeated: true): true
      case .message(let nested, repeated: false): nested.mayRepeat
      case .plain, .text(repeated: false), .unknown: false
      }
    }
  }

  func field(_ number: UInt64) -> Field {
    number < UInt64(fields.count) ? fields[Int(number)] : .unknown
  }

  /// A map entry whose key and value are not messages (counted as strings, the dearer).
  static let plainMapEntry = ProtoScanSchema([1: .text(repeated: false), 2: .text(repeated: false)])
}
