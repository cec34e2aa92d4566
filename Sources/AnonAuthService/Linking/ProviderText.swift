/// Text an identity provider hands us (a subject, an email, a display name, a picture
/// URL) is checked at the door against what `ImportAccounts` accepts, so that an
/// export of every account the service made imports again: no control characters
/// (U+0000 to U+001F, U+007F to U+009F, as `ImportRow` refuses them) anywhere, and
/// display names short enough in characters and in bytes.
enum ProviderText {
  /// Display names keep at most this many characters...
  static let maximumNameCharacters = 256
  /// ...and at most this many UTF-8 bytes (a character can be many scalars; the import
  /// takes 2048).
  static let maximumNameBytes = 1024

  static func hasControl(_ text: String) -> Bool {
    text.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }
  }

  /// `name` cut, at a character boundary, to the limits above.
  static func clippedName(_ name: String) -> String {
    var out = ""
    var bytes = 0
    for character in name.prefix(maximumNameCharacters) {
      let size = character.utf8.count
      if bytes + size > maximumNameBytes { break }
      out.append(character)
      bytes += size
    }
    return out
  }
}
