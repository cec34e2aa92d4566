import Foundation

/// The few string operations a JSON API request makes on every call (its path, query and
/// `X-Forwarded-For`), done on bytes when the text is ASCII. Swift's `String` works in
/// Characters (grapheme clusters), which costs a walk of Unicode's segmentation rules
/// per step; in ASCII text every byte is one Character (but CR LF, which none of these
/// separators is), so the pieces found by bytes are the very pieces found by Characters.
/// Other text takes the Character path as before.
enum ASCIIText {
  static func isASCII<Text: StringProtocol>(_ text: Text) -> Bool {
    text.utf8.allSatisfy { $0 < 0x80 }
  }

  /// `text.split(separator:omittingEmptySubsequences:)` on the ASCII `separator` (not CR
  /// or LF), with the same pieces.
  static func split(_ text: Substring, _ separator: Character, omittingEmpty: Bool = true) -> [Substring] {
    guard let byte = separator.asciiValue, byte != 10, byte != 13, isASCII(text) else {
      return text.split(separator: separator, omittingEmptySubsequences: omittingEmpty)
    }
    return text.utf8.split(separator: byte, omittingEmptySubsequences: omittingEmpty).map { Substring($0) }
  }

  /// The last non-empty piece between commas of `text`, without the spaces and tabs
  /// around it (`CharacterSet.whitespaces`, which in ASCII is just those two): the
  /// address the nearest proxy appended to `X-Forwarded-For`. Nil when there is none or
  /// it is only blanks.
  static func lastListItem(_ text: String) -> String? {
    guard isASCII(text) else {
      let last = text.split(separator: ",").last?.trimmingCharacters(in: .whitespaces)
      return last?.isEmpty == false ? last : nil
    }
    guard var item = split(text[...], ",").last else { return nil }
    while let first = item.utf8.first, first == 0x20 || first == 0x09 { item = item.dropFirst() }
    while let last = item.utf8.last, last == 0x20 || last == 0x09 { item = item.dropLast() }
    return item.isEmpty ? nil : String(item)
  }
}
