/// The limits on what one decode may cost and what one `Call` may carry besides its
/// payload, in one place.
///
/// Every message decoded through `ProtoBridge` (a frame, a request payload, a response)
/// is pre-scanned first (`ProtoPreScan`), and refused before protobuf-c allocates
/// anything when it is over these: a frame then ends the connection with `GoAway`
/// `MALFORMED_FRAME`, a payload gets status 3 `MALFORMED_REQUEST`.
public enum CallLimits {
  /// The most metadata entries one call may carry. Real clients send a handful
  /// (`x-api-key`, `authorization`, `x-request-id`, `x-end-user-ip`).
  public static let maxMetadataEntries = 64
  /// The most bytes of metadata one call may carry: the serialized map entries, which is
  /// keys plus values plus a few bytes of framing per entry.
  public static let maxMetadataBytes = 8 * 1024
  /// The longest method name looked up; longer names are `UNKNOWN_METHOD`, and the name
  /// is neither echoed nor logged in full.
  public static let maxMethodBytes = 256
  /// The most fields one message may carry that this build does not know, at any depth.
  /// protobuf-c allocates each and the bridge keeps a copy, so two-byte unknown fields
  /// were the cheapest way to make a 4 MiB frame cost two million allocations. A newer
  /// peer adds a few fields per message; 1024 still lets it add one to every account of
  /// the largest import or export page (1000).
  public static let maxUnknownFields = 1024
  /// The most a message may cost to decode, counted by the pre-scan: 1 per field and per
  /// element of a repeated field (map entries included), and for each nested message 1
  /// plus the number of fields its type declares (protobuf-c allocates a struct with a
  /// slot for each, and so does the Swift value, even when the wire carries none).
  ///
  /// The largest legitimate messages are admin batches: 1000 imported accounts with 10
  /// providers each cost about 140,000, an export page of 1000 such accounts about
  /// 180,000, 1000 uids to delete about 1,000. 2^18 leaves room above those while a
  /// message of tiny fields stops at a quarter of a million values instead of two
  /// million.
  public static let maxDecodeCost = 1 << 18
}
