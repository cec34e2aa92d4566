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
  /// The most a message may cost to decode, counted by the pre-scan: 1 per number (and
  /// per element of a packed run), 2 per string or bytes value (protobuf-c allocates
  /// each, the bridge makes a Swift value of each), 1 per unknown field, and for each
  /// nested message or map entry 1 plus the number of fields its type declares
  /// (protobuf-c allocates a struct with a slot for each, and so does the Swift value,
  /// even when the wire carries none).
  ///
  /// This bound applies to the types that may legitimately carry many values: admin
  /// batches and responses. The largest are 1000 imported accounts with 10 providers
  /// each and an export page of 1000 such accounts, each about 200,000 (what
  /// `DecodeCostTests` builds). 2^18 leaves room above those while a message of tiny
  /// fields stops at 131,072 strings or 18,724 empty accounts instead of two million.
  public static let maxDecodeCost = 1 << 18
  /// The decode cost bound of a message type that has no repeated field or map, at any
  /// depth: every request an API key can send (sign-up, sign-in, refresh, verify, ...).
  /// A legitimate one holds a few dozen values; 4096 leaves room for a field given more
  /// than once and for all the unknown fields `maxUnknownFields` allows.
  public static let maxFixedShapeDecodeCost = 4096
  /// The decode cost bound of a `Frame`, decoded on the I/O loop before anything else:
  /// a call with the most metadata (64 entries) costs about 330, and its payload is one
  /// bytes value whatever it holds (decoded later, with its own bound).
  public static let maxFrameDecodeCost = 4096

  /// The most accounts one `ImportAccounts` call may carry (more is `INVALID_ARGUMENT`);
  /// the CLI's import sends batches of exactly this many.
  public static let maxImportAccounts = 1000
}
