/// The limits on what one `Call` may carry besides its payload, in one place.
///
/// Metadata is unpacked (every entry allocated and hashed) before the method is even
/// looked up, so its cost must be bounded before the full decode: `FramePreScan` checks
/// these on the wire bytes in one linear pass.
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
}
