/// Unpadded base64url (RFC 4648 section 5), as JWTs and printable tokens use it.
public enum Base64URL {
  public static func encode(_ bytes: [UInt8]) -> String { UnpaddedBase64.url.encode(bytes) }

  /// Decodes canonical unpadded base64url; nil on padding, `+`, `/`, whitespace or any other
  /// character, on an impossible length, and on non-zero unused trailing bits. Strictness
  /// makes the encoding of given bytes unique, so a token cannot be altered in transit
  /// without changing its text.
  public static func decode(_ text: some StringProtocol) -> [UInt8]? {
    UnpaddedBase64.url.decode(text.utf8)
  }

  static func decodeCanonical(_ text: ArraySlice<UInt8>) -> [UInt8]? {
    UnpaddedBase64.url.decode(text)
  }
}
