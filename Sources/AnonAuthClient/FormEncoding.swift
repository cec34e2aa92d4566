import Foundation

/// `application/x-www-form-urlencoded`, for the token endpoint and `postBody`.
enum FormEncoding {
  /// Unreserved characters pass; everything else, `+`, `&` and `=` included, is escaped.
  private static let allowed: CharacterSet = {
    var set = CharacterSet.alphanumerics.intersection(
      CharacterSet(charactersIn: Unicode.Scalar(0)...Unicode.Scalar(127)))
    set.insert(charactersIn: "-._~")
    return set
  }()

  static func escape(_ value: String) -> String {
    value.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
  }

  static func encode(_ fields: [(String, String)]) -> String {
    fields.map { "\(escape($0.0))=\(escape($0.1))" }.joined(separator: "&")
  }
}
