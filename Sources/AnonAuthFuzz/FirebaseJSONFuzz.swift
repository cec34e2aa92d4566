import AnonAuthCrypto
import AnonAuthServer
import Foundation
import Synchronization

/// The JSON API's request decoding, for every endpoint: the first byte picks the endpoint
/// (low 7 bits) and whether the body is a form (high bit), the rest is the body. The
/// router is empty, so each request is decoded as far as its first native call, which
/// ends it (`UNKNOWN_METHOD`). Whatever the body, the answer is an HTTP status with a JSON
/// object body: Firebase's error body or the endpoint's answer.
enum FirebaseJSONFuzz {
  static let api = FirebaseAPI(router: Router())
  static let endpoints = FirebaseAPI.allEndpoints

  static func run(_ data: [UInt8]) {
    guard let first = data.first, !endpoints.isEmpty else { return }
    let endpoint = endpoints[Int(first & 0x7F) % endpoints.count]
    let contentType = first & 0x80 != 0 ? "application/x-www-form-urlencoded" : "application/json"
    let request = HTTPRequest(
      method: endpoint.httpMethod, path: endpoint.pattern.samplePath, query: "key=fuzz",
      headers: [("content-type", contentType)], body: Array(data.dropFirst()))
    let reply = respond(request)
    precondition((200..<600).contains(reply.status), "status \(reply.status)")
    guard case .object(let body)? = JSONValue(jsonBytes: reply.body) else {
      preconditionFailure("the answer is not a JSON object")
    }
    if reply.status != 200 {
      precondition(body["error"]?["code"]?.int64Value == Int64(reply.status), "the error body's code")
      precondition(body["error"]?["message"]?.stringValue != nil, "the error body's message")
    }
  }

  /// The application is async; a fuzz input is answered before the next one.
  static func respond(_ request: HTTPRequest) -> HTTPReply {
    let answer = Mutex<HTTPReply?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task {
      let reply = await api.respond(
        to: request, info: HTTPCallInfo(peerIP: "192.0.2.1", listener: .rpcPort, requestID: "fuzz"))
      answer.withLock { $0 = reply }
      done.signal()
    }
    done.wait()
    return answer.withLock { $0 } ?? HTTPReply(status: 0)
  }
}
