/// What decoding one message cost: the pre-scan's verdict and tally, and what protobuf-c
/// allocated. For the fuzz target and the tests that check the pre-scan bounds the
/// decode (the decode itself goes through `init(serializedBytes:)`).
public struct ProtoDecodeCost: Sendable {
  public let verdict: ProtoPreScan.Verdict
  public let tally: ProtoPreScan.Tally
  /// Blocks protobuf-c allocated; 0 when the pre-scan refused.
  public let allocations: Int
  /// Whether the message decoded.
  public let decoded: Bool
  /// The cost bound of the message type.
  public let costLimit: Int

  /// The most blocks protobuf-c may allocate for a message the pre-scan accepted: one
  /// struct for the message, and at most one block per field occurrence it counted
  /// (each value, each nested struct, each repeated field's array, each unknown field's
  /// copy), plus one array of unknown fields per message, itself an occurrence.
  public var allocationBound: Int { 1 + 2 * tally.occurrences }
}

extension ProtoMessage {
  /// Pre-scans and decodes `bytes` as this message, counting protobuf-c's allocations.
  public static func measureDecode(_ bytes: [UInt8]) -> ProtoDecodeCost {
    guard let bridged = Self.self as? any ProtoCBridged.Type else {
      return ProtoDecodeCost(
        verdict: .unreadable, tally: .init(), allocations: 0, decoded: false, costLimit: 0)
    }
    return measure(bridged, bytes)
  }

  private static func measure<M: ProtoCBridged>(_: M.Type, _ bytes: [UInt8]) -> ProtoDecodeCost {
    var tally = ProtoPreScan.Tally()
    let verdict = M.preScan(bytes, tally: &tally)
    let allocations = ProtoUnpackAllocations()
    let decoded = (try? ProtoBridge.decode(bytes, as: M.self, allocations: allocations)) != nil
    return ProtoDecodeCost(
      verdict: verdict, tally: tally, allocations: allocations.count, decoded: decoded,
      costLimit: M.decodeCostLimit)
  }
}
