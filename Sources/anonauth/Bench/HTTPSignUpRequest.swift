import AnonAuthNet
import Foundation

/// The bytes of the HTTPS/JSON anonymous sign-up a Firebase SDK sends
/// (`POST /v1/accounts:signUp?key=K` with `{"returnSecureToken":true}`), carrying the
/// same credentials as the native bench's sign-up: the admin key and an end-user IP of its
/// own (`X-Forwarded-For`, which the HTTP API believes from a caller with the admin key
/// as the native transport believes `x-end-user-ip`), so that both transports make the daemon do the same work and the per-IP quota is
/// exercised but never reached. It also carries the few headers an SDK adds
/// (`User-Agent`, `Accept`, `Accept-Language`, `X-Client-Version`), whose parsing is part
/// of what HTTP costs the daemon.
struct HTTPSignUpRequest: Sendable {
  /// The request's fixed part, up to the end-user IP header.
  private let prefix: [UInt8]
  /// The same request over HTTP/2: its path and headers (lowercase), but for the IP.
  private let path: String
  private let headers: [String: String]
  static let body = Array(#"{"returnSecureToken":true}"#.utf8)

  /// - Parameter authority: the `Host` header (`HOST:PORT`).
  init(authority: String, apiKey: String, adminKey: String) {
    var allowed = CharacterSet.alphanumerics
    allowed.insert(charactersIn: "-._~")
    let key = apiKey.addingPercentEncoding(withAllowedCharacters: allowed) ?? apiKey
    path = "/v1/accounts:signUp?key=\(key)"
    headers = [
      "user-agent": "anonauth-bench", "accept": "*/*", "accept-language": "en-US",
      "x-client-version": "anonauth-bench/1", "content-type": "application/json",
      "authorization": "Bearer \(adminKey)",
    ]
    prefix = Array(
      ("POST /v1/accounts:signUp?key=\(key) HTTP/1.1\r\n" + "Host: \(authority)\r\n"
        + "User-Agent: anonauth-bench\r\n" + "Accept: */*\r\n" + "Accept-Language: en-US\r\n"
        + "X-Client-Version: anonauth-bench/1\r\n"
        + "Content-Type: application/json\r\n" + "Content-Length: \(Self.body.count)\r\n"
        + "Authorization: Bearer \(adminKey)\r\n").utf8)
  }

  /// The n-th sign-up over HTTP/2: the same path, headers and body.
  func call(ip n: Int) -> BenchCall {
    var headers = headers
    headers["x-forwarded-for"] = BenchCommand.endUserIP(n)
    return BenchCall(method: path, payload: Self.body, metadata: headers)
  }

  /// The whole request of the n-th sign-up of a run.
  func bytes(ip n: Int) -> [UInt8] {
    prefix + Array("X-Forwarded-For: \(BenchCommand.endUserIP(n))\r\n\r\n".utf8) + Self.body
  }

  /// The reason a failed answer gives: Firebase's `error.message` up to its first " : "
  /// (`TOO_MANY_ATTEMPTS_TRY_LATER : ...`), else `HTTP_<status>`; nil for a 200. The
  /// body of a 200 is not decoded: the bench's own CPU shares the machine with the daemon.
  static func failureReason(_ response: HTTPResponse) -> String? {
    if response.status == 200 { return nil }
    let object = try? JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]
    if let error = object?["error"] as? [String: Any], let message = error["message"] as? String,
      let code = message.components(separatedBy: " : ").first, !code.isEmpty
    {
      return code
    }
    return "HTTP_\(response.status)"
  }
}
