import AnonAuthCrypto
import AnonAuthNet
import Foundation

/// A public document served with the caching headers verifiers and HTTP caches use: a
/// strong `ETag` (the body's SHA-256), `Cache-Control: public, max-age`, and `304 Not
/// Modified` to an `If-None-Match` that names the current tag (RFC 9110 §13.1.2).
enum ConditionalGET {
  /// `"<first 32 hex digits of SHA-256(body)>"`: the same body always has the same tag,
  /// on every node of a cluster.
  static func entityTag(_ body: [UInt8]) -> String {
    "\"" + SHA256.hash(body).prefix(16).map { hexDigits($0) }.joined() + "\""
  }

  private static func hexDigits(_ byte: UInt8) -> String {
    let digits = Array("0123456789abcdef")
    return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
  }

  /// Whether `ifNoneMatch` (a header value: tags separated by commas, or `*`) names
  /// `tag`; weak tags compare by their opaque part, as If-None-Match does.
  static func matches(_ ifNoneMatch: String, tag: String) -> Bool {
    ifNoneMatch.split(separator: ",").contains { candidate in
      var value = candidate.trimmingCharacters(in: .whitespaces)
      if value == "*" { return true }
      if value.hasPrefix("W/") { value.removeFirst(2) }
      return value == tag
    }
  }

  /// The document's reply to `request`: 200 with the body, or 304 without it.
  static func reply(
    _ body: [UInt8], contentType: String, maxAgeSeconds: Int64, to request: HTTPRequest
  ) -> HTTPReply {
    let tag = entityTag(body)
    let headers: [(name: String, value: String)] = [
      ("cache-control", "public, max-age=\(maxAgeSeconds)"), ("etag", tag),
    ]
    if let ifNoneMatch = request.header("if-none-match"), matches(ifNoneMatch, tag: tag) {
      return HTTPReply(status: 304, headers: headers)
    }
    return HTTPReply(status: 200, headers: [("content-type", contentType)] + headers, body: body)
  }
}
