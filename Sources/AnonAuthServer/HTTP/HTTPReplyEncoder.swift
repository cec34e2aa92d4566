import Glibc
import Synchronization

/// Turns replies into HTTP/1.1 response bytes: the status line, the application's
/// headers (minus those the transport owns), then `Content-Length`, `Date`,
/// `x-request-id` and, when the connection ends, `Connection: close`.
enum HTTPReplyEncoder {
  /// Headers only the transport writes: an application's copy is dropped, so that it can
  /// never frame the response differently from its body.
  static let transportHeaders: Set<String> = [
    "content-length", "transfer-encoding", "connection", "date", "keep-alive", "x-request-id",
  ]

  /// Written as bytes into one buffer sized for the body, which is copied once: a
  /// reply's head was a string built piece by piece, then copied into an array that grew
  /// again for the body.
  static func encode(
    _ reply: HTTPReply, requestID: String, close: Bool, omitBody: Bool = false, now: time_t = time(nil)
  ) -> [UInt8] {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(256 + (omitBody ? 0 : reply.body.count))
    func line(_ name: String, _ value: String) {
      bytes.append(contentsOf: name.utf8)
      bytes.append(contentsOf: ": ".utf8)
      bytes.append(contentsOf: value.utf8)
      bytes.append(contentsOf: "\r\n".utf8)
    }
    bytes.append(contentsOf: "HTTP/1.1 \(reply.status) ".utf8)
    bytes.append(contentsOf: reasonPhrase(reply.status).utf8)
    bytes.append(contentsOf: "\r\n".utf8)
    for (name, value) in reply.headers {
      let lower = name.lowercased()
      // A header that could split the response (CR, LF, NUL) is not sent at all.
      guard !transportHeaders.contains(lower), isSafe(name), isSafe(value), !name.isEmpty else { continue }
      line(name, value)
    }
    line("content-length", String(reply.body.count))
    line("date", httpDate(now))
    if isSafe(requestID) { line("x-request-id", requestID) }
    if close { line("connection", "close") }
    bytes.append(contentsOf: "\r\n".utf8)
    if !omitBody { bytes.append(contentsOf: reply.body) }
    return bytes
  }

  /// The interim answer a client sending `Expect: 100-continue` waits for.
  static let continueBytes = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)

  /// The transport's own error reply, in Firebase's error body shape:
  /// `{"error":{"code":413,"message":"...","status":"..."}}`.
  static func errorReply(status: Int, message: String) -> HTTPReply {
    let body =
      "{\"error\":{\"code\":\(status),\"message\":\(jsonString(message)),\"status\":\"\(statusName(status))\"}}"
    return HTTPReply(
      status: status, headers: [("content-type", "application/json; charset=UTF-8")], body: Array(body.utf8))
  }

  private static func isSafe(_ text: String) -> Bool {
    !text.utf8.contains { $0 == 13 || $0 == 10 || $0 == 0 }
  }

  /// A JSON string literal of `text`.
  static func jsonString(_ text: String) -> String {
    var out = "\""
    for scalar in text.unicodeScalars {
      switch scalar {
      case "\"": out += "\\\""
      case "\\": out += "\\\\"
      case "\n": out += "\\n"
      case "\r": out += "\\r"
      case "\t": out += "\\t"
      default:
        if scalar.value < 0x20 {
          let hex = String(scalar.value, radix: 16)
          out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
        } else {
          out.unicodeScalars.append(scalar)
        }
      }
    }
    return out + "\""
  }

  /// The Google API status name Firebase puts next to an HTTP status.
  static func statusName(_ status: Int) -> String {
    switch status {
    case 400, 411, 413, 414, 417, 431, 505: return "INVALID_ARGUMENT"
    case 401: return "UNAUTHENTICATED"
    case 403: return "PERMISSION_DENIED"
    case 404: return "NOT_FOUND"
    case 408, 504: return "DEADLINE_EXCEEDED"
    case 409: return "ALREADY_EXISTS"
    case 429: return "RESOURCE_EXHAUSTED"
    case 501: return "UNIMPLEMENTED"
    case 503: return "UNAVAILABLE"
    default: return status >= 500 ? "INTERNAL" : "FAILED_PRECONDITION"
    }
  }

  static func reasonPhrase(_ status: Int) -> String {
    switch status {
    case 100: return "Continue"
    case 200: return "OK"
    case 204: return "No Content"
    case 400: return "Bad Request"
    case 401: return "Unauthorized"
    case 403: return "Forbidden"
    case 404: return "Not Found"
    case 405: return "Method Not Allowed"
    case 408: return "Request Timeout"
    case 409: return "Conflict"
    case 413: return "Content Too Large"
    case 414: return "URI Too Long"
    case 415: return "Unsupported Media Type"
    case 417: return "Expectation Failed"
    case 429: return "Too Many Requests"
    case 431: return "Request Header Fields Too Large"
    case 500: return "Internal Server Error"
    case 501: return "Not Implemented"
    case 503: return "Service Unavailable"
    case 504: return "Gateway Timeout"
    case 505: return "HTTP Version Not Supported"
    default: return "Status"
    }
  }

  /// RFC 9110's IMF-fixdate, e.g. `Sun, 06 Nov 1994 08:49:37 GMT`. Every reply of a
  /// second carries the same text, made once.
  static func httpDate(_ time: time_t) -> String {
    if let text = lastDate.withLock({ $0.time == time ? $0.text : nil }) { return text }
    let text = formatDate(time)
    lastDate.withLock { $0 = (time, text) }
    return text
  }

  private static let lastDate = Mutex<(time: time_t, text: String)>((-1, ""))

  private static func formatDate(_ time: time_t) -> String {
    var t = time
    var parts = tm()
    gmtime_r(&t, &parts)
    let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
    let day = days[Int(parts.tm_wday) % 7]
    let month = months[Int(parts.tm_mon) % 12]
    return
      "\(day), \(two(parts.tm_mday)) \(month) \(parts.tm_year + 1900) \(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
  }
}
