/// `grpc-message` is percent-encoded UTF-8 (gRPC's PROTOCOL-HTTP2): `%XX` for bytes
/// outside printable ASCII and for `%` itself. Decoding is lenient as the spec asks: a
/// `%` not followed by two hex digits is kept as it is, and invalid UTF-8 is repaired.
public enum GRPCPercentEncoding {
  public static func decode(_ text: some Collection<UInt8>) -> String {
    let bytes = Array(text)
    var out: [UInt8] = []
    out.reserveCapacity(bytes.count)
    var index = 0
    while index < bytes.count {
      let byte = bytes[index]
      if byte == UInt8(ascii: "%"), index + 2 < bytes.count,
        let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2])
      {
        out.append(high << 4 | low)
        index += 3
      } else {
        out.append(byte)
        index += 1
      }
    }
    return String(decoding: out, as: UTF8.self)
  }

  private static func hexValue(_ byte: UInt8) -> UInt8? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
    default: nil
    }
  }
}
