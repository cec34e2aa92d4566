/// Base64 as people paste it from the Firebase console, the CLI's flags or a JSON file:
/// the standard or the URL-safe alphabet (firebase-tools sends the latter), with or
/// without `=` padding. Decoding stays canonical otherwise (no stray characters, zero
/// unused bits), so one value has one spelling per alphabet.
enum ConfigBase64 {
  static func decode(_ text: String) -> [UInt8]? {
    var bytes = Array(text.utf8)
    var padding = 0
    while bytes.last == UInt8(ascii: "=") {
      bytes.removeLast()
      padding += 1
    }
    guard padding == 0 || (padding <= 2 && (bytes.count + padding) % 4 == 0) else { return nil }
    for index in bytes.indices {
      if bytes[index] == UInt8(ascii: "-") { bytes[index] = UInt8(ascii: "+") }
      if bytes[index] == UInt8(ascii: "_") { bytes[index] = UInt8(ascii: "/") }
    }
    return UnpaddedBase64.standard.decode(bytes)
  }

  /// Standard alphabet with padding, as the Firebase console writes it.
  static func encode(_ bytes: [UInt8]) -> String {
    let text = UnpaddedBase64.standard.encode(bytes)
    return text + String(repeating: "=", count: (4 - text.utf8.count % 4) % 4)
  }
}
