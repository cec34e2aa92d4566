/// The `grpc-message` trailer's encoding: the message's UTF-8 bytes, with every byte
/// outside printable ASCII (0x20-0x7E) and the percent sign itself written `%XX`
/// (uppercase hex), as gRPC's HTTP/2 protocol asks. A header value may not carry
/// arbitrary bytes, and clients decode this form back into the text.
enum GRPCMessageText {
  static func percentEncoded(_ message: String) -> String {
    let utf8 = message.utf8
    // Most messages are plain ASCII: then the text goes out as it is.
    guard utf8.contains(where: needsEscape) else { return message }
    var out: [UInt8] = []
    out.reserveCapacity(utf8.count + 16)
    for byte in utf8 {
      if needsEscape(byte) {
        out.append(UInt8(ascii: "%"))
        out.append(hexDigits[Int(byte >> 4)])
        out.append(hexDigits[Int(byte & 0x0f)])
      } else {
        out.append(byte)
      }
    }
    return String(decoding: out, as: UTF8.self)
  }

  private static func needsEscape(_ byte: UInt8) -> Bool {
    byte < 0x20 || byte > 0x7e || byte == UInt8(ascii: "%")
  }

  private static let hexDigits = Array("0123456789ABCDEF".utf8)
}
