/// The request line of an HTTP/1.x request, parsed strictly: the ops port serves
/// probes and scrapers, so anything unusual is a 400.
/// Visible to the fuzz target through `@_spi(Fuzzing)`, and to no one else.
@_spi(Fuzzing) public struct HTTPRequestHead: Equatable {
  let method: String
  let path: String

  /// Parses the bytes up to (not including) the blank line that ends the head.
  /// Returns nil when they are not a well-formed HTTP/1.0 or 1.1 request head.
  @_spi(Fuzzing) public init?(_ head: ArraySlice<UInt8>) {
    guard let text = String(validating: head, as: UTF8.self) else { return nil }
    let lines = text.split(separator: "\r\n", omittingEmptySubsequences: false)
    guard let requestLine = lines.first else { return nil }
    let parts = requestLine.split(separator: " ", omittingEmptySubsequences: false)
    guard parts.count == 3, parts[2] == "HTTP/1.1" || parts[2] == "HTTP/1.0",
      !parts[0].isEmpty, parts[0].allSatisfy({ $0.isUppercase }),
      parts[1].hasPrefix("/")
    else { return nil }
    for line in lines.dropFirst() {
      // Each header is "Name: value" with a token name.
      guard let colon = line.firstIndex(of: ":"), colon != line.startIndex,
        line[..<colon].allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })
      else { return nil }
    }
    self.method = String(parts[0])
    let target = parts[1]
    self.path = String(target[..<(target.firstIndex(of: "?") ?? target.endIndex)])
  }
}
