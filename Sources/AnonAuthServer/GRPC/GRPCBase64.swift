/// Decodes the base64 text `ProtoDescriptors` embeds (standard alphabet, `=` padding);
/// line breaks and spaces are skipped, as the generated literals wrap their lines. Nil for
/// any other character or a bad length: the generator never writes one, and a unit test
/// decodes every embedded file.
enum GRPCBase64 {
  static func decode(_ text: String) -> [UInt8]? {
    var output: [UInt8] = []
    output.reserveCapacity(text.utf8.count * 3 / 4)
    var accumulator: UInt32 = 0
    var count = 0
    var padding = 0
    for byte in text.utf8 {
      let value: UInt32
      switch byte {
      case UInt8(ascii: "A")...UInt8(ascii: "Z"): value = UInt32(byte - UInt8(ascii: "A"))
      case UInt8(ascii: "a")...UInt8(ascii: "z"): value = UInt32(byte - UInt8(ascii: "a")) + 26
      case UInt8(ascii: "0")...UInt8(ascii: "9"): value = UInt32(byte - UInt8(ascii: "0")) + 52
      case UInt8(ascii: "+"): value = 62
      case UInt8(ascii: "/"): value = 63
      case UInt8(ascii: "="):
        padding += 1
        value = 0
      case UInt8(ascii: "\n"), UInt8(ascii: " "), UInt8(ascii: "\r"): continue
      default: return nil
      }
      guard padding == 0 || byte == UInt8(ascii: "=") else { return nil }
      accumulator = accumulator << 6 | value
      count += 1
      if count == 4 {
        output.append(UInt8(truncatingIfNeeded: accumulator >> 16))
        output.append(UInt8(truncatingIfNeeded: accumulator >> 8))
        output.append(UInt8(truncatingIfNeeded: accumulator))
        accumulator = 0
        count = 0
      }
    }
    guard count == 0, padding <= 2 else { return nil }
    output.removeLast(padding)
    return output
  }
}
