import Foundation

/// One HTTP/1.1 response as the test clients read it: the status, the headers by
/// lower-cased name, and the body.
public struct TestHTTPResponse: Sendable {
  public let status: Int
  public let headers: [String: String]
  public let body: [UInt8]
}

/// Splits the bytes of a keep-alive connection into responses framed by `Content-Length`
/// (all the daemon sends on HTTP/1.1). The plain and the TLS test clients differ only in
/// how they read bytes, so each passes its read as `fill`.
public struct HTTPResponseFramer {
  private var buffer: [UInt8] = []

  public init() {}

  /// Bytes read past the last response: what the server sent that no response framed.
  public var leftover: [UInt8] { buffer }

  /// Adds bytes read from the connection outside `next` (a read until close).
  public mutating func append(_ bytes: some Collection<UInt8>) { buffer += bytes }

  /// The next response; `fill` returns more bytes from the connection or throws when it
  /// has none.
  public mutating func next(fill: () throws -> ArraySlice<UInt8>) throws -> TestHTTPResponse {
    let blank = Array("\r\n\r\n".utf8)
    var end = 0
    while true {
      if buffer.count >= 4,
        let found = (0...(buffer.count - 4)).first(where: { Array(buffer[$0..<($0 + 4)]) == blank })
      {
        end = found
        break
      }
      buffer += try fill()
    }
    let lines = String(decoding: buffer[0..<end], as: UTF8.self).components(separatedBy: "\r\n")
    let fields = lines[0].split(separator: " ")
    let status = fields.count > 1 ? Int(fields[1]) ?? 0 : 0
    var headers: [String: String] = [:]
    for line in lines.dropFirst() {
      guard let colon = line.firstIndex(of: ":") else { continue }
      headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
        in: .whitespaces)
    }
    buffer.removeFirst(end + 4)
    let length = Int(headers["content-length"] ?? "0") ?? 0
    while buffer.count < length { buffer += try fill() }
    let body = Array(buffer[0..<length])
    buffer.removeFirst(length)
    return TestHTTPResponse(status: status, headers: headers, body: body)
  }
}
