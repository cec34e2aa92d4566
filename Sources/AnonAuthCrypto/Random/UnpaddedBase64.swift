/// Unpadded base64 over an alphabet whose last two characters vary: `-_` for base64url
/// (JWTs, tokens), `+/` for PHC password strings. Decoding is strict — no padding, no
/// whitespace, no other character, zero unused trailing bits — so given bytes have
/// exactly one spelling and a token cannot be altered without changing its text.
struct UnpaddedBase64: Sendable {
  private let alphabet: [UInt8]
  private let char62: UInt8
  private let char63: UInt8
  /// Each byte's six-bit value, or 0x80 for a byte outside the alphabet.
  private let sextets: [UInt8]

  init(_ char62: Character, _ char63: Character) {
    self.char62 = char62.asciiValue ?? 0
    self.char63 = char63.asciiValue ?? 0
    alphabet =
      Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8) + [
        self.char62, self.char63,
      ]
    var sextets = [UInt8](repeating: 0x80, count: 256)
    for (value, character) in alphabet.enumerated() { sextets[Int(character)] = UInt8(value) }
    self.sextets = sextets
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

  /// Four characters at a time through a 256-entry table: it runs three times for every
  /// token checked.
  func decode(_ text: some Collection<UInt8>) -> [UInt8]? {
    let count = text.count
    guard count % 4 != 1 else { return nil }
    let decoded: [UInt8]?? = text.withContiguousStorageIfAvailable { decode(buffer: $0) }
    if let decoded { return decoded }
    return Array(text).withUnsafeBufferPointer { decode(buffer: $0) }
  }

  private func decode(buffer text: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
    let table = sextets
    var out: [UInt8] = []
    out.reserveCapacity(text.count * 3 / 4)
    var index = 0
    var invalid: UInt8 = 0
    while index + 4 <= text.count {
      let a = table[Int(text[index])]
      let b = table[Int(text[index + 1])]
      let c = table[Int(text[index + 2])]
      let d = table[Int(text[index + 3])]
      invalid |= (a | b | c | d) & 0x80
      let n = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d)
      out.append(UInt8(truncatingIfNeeded: n >> 16))
      out.append(UInt8(truncatingIfNeeded: n >> 8))
      out.append(UInt8(truncatingIfNeeded: n))
      index += 4
    }
    guard invalid == 0 else { return nil }
    // Leftover bits (2 or 4) pad the last character and must be zero.
    switch text.count - index {
    case 2:
      let a = table[Int(text[index])]
      let b = table[Int(text[index + 1])]
      guard (a | b) & 0x80 == 0, b & 0x0F == 0 else { return nil }
      out.append(a << 2 | b >> 4)
    case 3:
      let a = table[Int(text[index])]
      let b = table[Int(text[index + 1])]
      let c = table[Int(text[index + 2])]
      guard (a | b | c) & 0x80 == 0, c & 0x03 == 0 else { return nil }
      out.append(a << 2 | b >> 4)
      out.append((b & 0x0F) << 4 | c >> 2)
    default:
      break
    }
    return out
  }
}
