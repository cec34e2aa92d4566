/// The base64 of PHC strings: the standard alphabet (`+` and `/`) without padding
/// (password-hashing-competition string format), strict, so a stored hash has exactly
/// one spelling.
enum PHCBase64 {
  static func encode(_ bytes: [UInt8]) -> String { UnpaddedBase64.standard.encode(bytes) }
  static func decode(_ text: Substring) -> [UInt8]? { UnpaddedBase64.standard.decode(text.utf8) }
}
