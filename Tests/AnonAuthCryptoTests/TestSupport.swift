extension Array where Element == UInt8 {
  /// Bytes from hex text; test vectors are written that way.
  init(hex: String) {
    var bytes: [UInt8] = []
    var high: UInt8?
    for character in hex.utf8 {
      let nibble: UInt8
      switch character {
      case UInt8(ascii: "0")...UInt8(ascii: "9"): nibble = character - UInt8(ascii: "0")
      case UInt8(ascii: "a")...UInt8(ascii: "f"): nibble = character - UInt8(ascii: "a") + 10
      default: continue
      }
      if let h = high {
        bytes.append(h << 4 | nibble)
        high = nil
      } else {
        high = nibble
      }
    }
    self = bytes
  }

  var hex: String {
    map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
  }
}

/// `bytes` with one bit flipped.
func flippingBit(_ bit: Int, of bytes: [UInt8]) -> [UInt8] {
  var copy = bytes
  copy[bit / 8] ^= UInt8(1 << (bit % 8))
  return copy
}
