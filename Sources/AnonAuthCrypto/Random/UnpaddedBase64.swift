/// Unpadded base64 over an alphabet whose last two characters vary: `-_` for base64url
/// (JWTs, tokens), `+/` for PHC password strings. Decoding is strict — no padding, no
/// whitespace, no other character, zero unused trailing bits — so given bytes have
/// exactly one spelling and a token cannot be altered without changing its text.
struct UnpaddedBase64: Sendable {
  private let alphabet: [UInt8]
  private let char62: UInt8
  private let char63: UInt8

  init(_ char62: Character, _ char63: Character) {
    self.char62 = char62.asciiValue ?? 0
    self.char63 = char63.asciiValue ?? 0
    alphabet =
      Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8) + [
        self.char62, self.char63,
      ]
  }

  static let url = UnpaddedBase64("-", "_")
  static let standard = UnpaddedBase64("+", "/")

  /// Written out three bytes at a time: it runs three times for every token minted.
  func encode(_ bytes: [UInt8]) -> String {
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

  func decode(_ text: some Collection<UInt8>) -> [UInt8]? {
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

  private func sextet(_ character: UInt8) -> UInt8? {
    switch character {
    case UInt8(ascii: "A")...UInt8(ascii: "Z"): character - UInt8(ascii: "A")
    case UInt8(ascii: "a")...UInt8(ascii: "z"): character - UInt8(ascii: "a") + 26
    case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0") + 52
    case char62: 62
    case char63: 63
    default: nil
    }
  }
}
