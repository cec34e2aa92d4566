/// The base64 of PHC strings: the standard alphabet (`+` and `/`) without padding
/// (password-hashing-competition string format). Decoding is strict (no padding, no
/// whitespace, zero unused bits), so a stored hash has exactly one spelling.
enum PHCBase64 {
  private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

  static func encode(_ bytes: [UInt8]) -> String {
    var out: [UInt8] = []
    out.reserveCapacity((bytes.count * 4 + 2) / 3)
    var accumulator: UInt32 = 0
    var bits = 0
    for byte in bytes {
      accumulator = accumulator << 8 | UInt32(byte)
      bits += 8
      while bits >= 6 {
        bits -= 6
        out.append(alphabet[Int((accumulator >> UInt32(bits)) & 63)])
      }
    }
    if bits > 0 { out.append(alphabet[Int((accumulator << UInt32(6 - bits)) & 63)]) }
    return String(decoding: out, as: UTF8.self)
  }

  static func decode(_ text: Substring) -> [UInt8]? {
    let characters = Array(text.utf8)
    guard characters.count % 4 != 1 else { return nil }
    var out: [UInt8] = []
    out.reserveCapacity(characters.count * 3 / 4)
    var accumulator: UInt32 = 0
    var bits = 0
    for character in characters {
      guard let value = sextet(character) else { return nil }
      accumulator = (accumulator << 6) | UInt32(value)
      bits += 6
      if bits >= 8 {
        bits -= 8
        out.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
        accumulator &= (1 << UInt32(bits)) - 1
      }
    }
    return accumulator == 0 ? out : nil
  }

  private static func sextet(_ character: UInt8) -> UInt8? {
    switch character {
    case UInt8(ascii: "A")...UInt8(ascii: "Z"): character - UInt8(ascii: "A")
    case UInt8(ascii: "a")...UInt8(ascii: "z"): character - UInt8(ascii: "a") + 26
    case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0") + 52
    case UInt8(ascii: "+"): 62
    case UInt8(ascii: "/"): 63
    default: nil
    }
  }
}
