import AnonAuthCrypto

/// Decodes a request body into the members an endpoint reads: a JSON object (through the
/// depth-limited parser), or `application/x-www-form-urlencoded` fields as strings (the
/// token endpoint's classic form). Anything else is Firebase's 400 "Invalid JSON payload".
enum RequestBody {
  static func decode(_ request: HTTPRequest) throws(FirebaseError) -> [String: JSONValue] {
    guard !request.body.isEmpty else { return [:] }
    let contentType = request.header("content-type")?.lowercased() ?? ""
    if contentType.hasPrefix("application/x-www-form-urlencoded") {
      guard let text = String(validating: request.body, as: UTF8.self) else {
        throw FirebaseError.invalidJSON("the form is not UTF-8")
      }
      return FormDecoding.fields(text).mapValues { .string($0) }
    }
    guard let value = JSONValue(jsonBytes: request.body) else {
      guard String(validating: request.body, as: UTF8.self) != nil else {
        throw FirebaseError.invalidJSON("the body is not UTF-8")
      }
      throw FirebaseError.invalidJSON(
        "the body is not JSON, or nests deeper than \(JSONValue.maximumNestingDepth) levels")
    }
    guard case .object(let members) = value else {
      throw FirebaseError.invalidJSON("the body is not a JSON object")
    }
    return members
  }
}

/// `a=1&b=x%20y` decoding for query strings and form bodies.
enum FormDecoding {
  /// The fields of `text`; the first of a repeated name wins, as Google's front end does.
  static func fields(_ text: String) -> [String: String] {
    var out: [String: String] = [:]
    for pair in ASCIIText.split(text[...], "&") {
      // The name ends at the first "=" (ASCII, one Character wherever it stands).
      let equals = pair.firstIndex(of: "=")
      let name = percentDecoded(pair[..<(equals ?? pair.endIndex)], plusIsSpace: true)
      guard !name.isEmpty, out[name] == nil else { continue }
      out[name] = equals.map { percentDecoded(pair[pair.index(after: $0)...], plusIsSpace: true) } ?? ""
    }
    return out
  }

  /// `%XX` decoded (and `+` as a space in forms); a malformed escape stays as it is, and
  /// bytes that are not UTF-8 are repaired, so hostile input never traps.
  static func percentDecoded<S: StringProtocol>(_ text: S, plusIsSpace: Bool) -> String {
    // Nothing to decode (an API key, most values): the text as it is.
    if !text.utf8.contains(where: { $0 == UInt8(ascii: "%") || ($0 == UInt8(ascii: "+") && plusIsSpace) }) {
      return String(text)
    }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(text.utf8.count)
    var iterator = Array(text.utf8)[...]
    while let byte = iterator.popFirst() {
      if byte == UInt8(ascii: "+"), plusIsSpace {
        bytes.append(UInt8(ascii: " "))
      } else if byte == UInt8(ascii: "%"), iterator.count >= 2,
        let high = hexValue(iterator[iterator.startIndex]),
        let low = hexValue(iterator[iterator.startIndex + 1])
      {
        bytes.append(high << 4 | low)
        iterator = iterator.dropFirst(2)
      } else {
        bytes.append(byte)
      }
    }
    return String(decoding: bytes, as: UTF8.self)
  }

  private static func hexValue(_ byte: UInt8) -> UInt8? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
    default: return nil
    }
  }
}
