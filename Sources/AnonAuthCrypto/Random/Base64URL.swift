/// Unpadded base64url (RFC 4648 section 5), as JWTs and printable tokens use it.
///
/// Written out byte by byte: it runs three times for every token minted, and going
/// through Foundation's base64 and string replacement cost more than the rest of the
/// JWT assembly.
public enum Base64URL {
  private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

  public static func encode(_ bytes: [UInt8]) -> String {
    var out: [UInt8] = []
    out.reserveCapacity((bytes.count * 4 + 2) / 3)
    var index = 0
    while index + 3 <= bytes.count {
      let n = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
      out.append(alphabet[Int(n >> 18)])
      out.append(alphabet[Int((n >> 12) & 63)])
      out.append(alphabet[Int((n >> 6) & 63)])
      out.append(alphabet[Int(n & 63)])
      index += 3
    }
    switch bytes.count - index {
    case 1:
      let n = UInt32(bytes[index]) << 16
      out.append(alphabet[Int(n >> 18)])
      out.append(alphabet[Int((n >> 12) & 63)])
    case 2:
      let n = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8
      out.append(alphabet[Int(n >> 18)])
      out.append(alphabet[Int((n >> 12) & 63)])
      out.append(alphabet[Int((n >> 6) & 63)])
    default:
      break
    }
    return String(decoding: out, as: UTF8.self)
  }

  /// Decodes canonical unpadded base64url; nil on padding, `+`, `/`, whitespace or any other
  /// character, on an impossible length, and on non-zero unused trailing bits. Strictness
  /// makes the encoding of given bytes unique, so a token cannot be altered in transit
  /// without changing its text.
  public static func decode(_ text: some StringProtocol) -> [UInt8]? {
    decodeCanonical(Array(text.utf8)[...])
  }

  static func decodeCanonical(_ text: ArraySlice<UInt8>) -> [UInt8]? {
    guard text.count % 4 != 1 else { return nil }
    var out: [UInt8] = []
    out.reserveCapacity(text.count * 3 / 4)
    var accumulator: UInt32 = 0
    var bits = 0
    for character in text {
      guard let value = sextet(character) else { return nil }
      accumulator = (accumulator << 6) | UInt32(value)
      bits += 6
      if bits >= 8 {
        bits -= 8
        out.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
        accumulator &= (1 << UInt32(bits)) - 1
      }
    }
    // Leftover bits (2 or 4) are padding of the last character and must be zero.
    return accumulator == 0 ? out : nil
  }

  private static func sextet(_ character: UInt8) -> UInt8? {
    switch character {
    case UInt8(ascii: "A")...UInt8(ascii: "Z"): character - UInt8(ascii: "A")
    case UInt8(ascii: "a")...UInt8(ascii: "z"): character - UInt8(ascii: "a") + 26
    case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0") + 52
    case UInt8(ascii: "-"): 62
    case UInt8(ascii: "_"): 63
    default: nil
    }
  }
}
