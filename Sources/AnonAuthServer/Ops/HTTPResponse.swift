/// A complete, small HTTP response for the ops port.
public struct HTTPResponse: Sendable {
  public var status: Int
  public var contentType: String
  public var headers: [(String, String)]
  public var body: [UInt8]

  public init(
    status: Int, contentType: String = "text/plain; charset=utf-8", headers: [(String, String)] = [],
    body: String
  ) {
    self.status = status
    self.contentType = contentType
    self.headers = headers
    self.body = Array(body.utf8)
  }

  static func reasonPhrase(_ status: Int) -> String {
    switch status {
    case 200: "OK"
    case 400: "Bad Request"
    case 404: "Not Found"
    case 405: "Method Not Allowed"
    case 431: "Request Header Fields Too Large"
    case 503: "Service Unavailable"
    default: "Status"
    }
  }

  /// The bytes on the wire; every ops response closes its connection.
  func serialized() -> [UInt8] {
    var head = "HTTP/1.1 \(status) \(Self.reasonPhrase(status))\r\n"
    head += "Content-Type: \(contentType)\r\n"
    head += "Content-Length: \(body.count)\r\n"
    head += "Connection: close\r\n"
    for (name, value) in headers { head += "\(name): \(value)\r\n" }
    head += "\r\n"
    return Array(head.utf8) + body
  }
}
