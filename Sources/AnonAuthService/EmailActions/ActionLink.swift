import Foundation

/// The link an email action's mail carries: Firebase's action-link layout,
/// `<action URL>?mode=<mode>&oobCode=<code>&apiKey=<key>&continueUrl=<url>&lang=<locale>`,
/// which FirebaseAuth's `isSignIn(withEmailLink:)` and app link handlers parse.
public enum ActionLink {
  public static func make(
    base: String, kind: OobKind, code: String, apiKey: String, continueURL: String, locale: String
  ) -> String {
    var items = [URLQueryItem(name: "mode", value: kind.mode), URLQueryItem(name: "oobCode", value: code)]
    if !apiKey.isEmpty { items.append(URLQueryItem(name: "apiKey", value: apiKey)) }
    if !continueURL.isEmpty { items.append(URLQueryItem(name: "continueUrl", value: continueURL)) }
    items.append(URLQueryItem(name: "lang", value: locale.isEmpty ? "en" : locale))
    let query = items.map { "\($0.name)=\(encode($0.value ?? ""))" }.joined(separator: "&")
    return base + (base.contains("?") ? "&" : "?") + query
  }

  /// Percent-encodes all but RFC 3986's unreserved characters.
  static func encode(_ value: String) -> String {
    var out = ""
    for byte in value.utf8 {
      let c = Character(UnicodeScalar(byte))
      if byte < 0x80 && (c.isLetter || c.isNumber || "-._~".contains(c)) {
        out.append(c)
      } else {
        out += String(format: "%%%02X", byte)
      }
    }
    return out
  }
}
