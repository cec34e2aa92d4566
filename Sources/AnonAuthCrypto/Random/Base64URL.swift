import Foundation

/// Unpadded base64url (RFC 4648 section 5), as JWTs and printable tokens use it.
public enum Base64URL {
  public static func encode(_ bytes: [UInt8]) -> String {
    Data(bytes).base64EncodedString()
      .replacingOccurrences(of: "+", with: "-")
      .replacingOccurrences(of: "/", with: "_")
      .replacingOccurrences(of: "=", with: "")
  }

  /// Decodes unpadded or padded base64url; nil on any other character.
  public static func decode(_ text: some StringProtocol) -> [UInt8]? {
    var s = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
    if s.contains("=") || s.contains("\n") || s.contains(" ") { return nil }
    switch s.count % 4 {
    case 0: break
    case 2: s += "=="
    case 3: s += "="
    default: return nil
    }
    return Data(base64Encoded: s).map { Array($0) }
  }
}
