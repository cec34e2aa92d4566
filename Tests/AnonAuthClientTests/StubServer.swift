import Foundation
import Synchronization

@testable import AnonAuthClient

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// A request as the stub saw it.
struct SeenRequest: Sendable {
  /// The last path component: "accounts:signUp", "token".
  var method: String
  var scheme: String
  var port: Int?
  var path: String
  var query: String
  var contentType: String
  var body: Data

  /// The body as a JSON object.
  var json: [String: Any] {
    (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:]
  }

  /// The body as a form.
  var form: [String: String] {
    var fields: [String: String] = [:]
    for pair in String(decoding: body, as: UTF8.self).split(separator: "&") {
      let parts = pair.split(separator: "=", maxSplits: 1).map { String($0).removingPercentEncoding ?? "" }
      fields[parts[0]] = parts.count > 1 ? parts[1] : ""
    }
    return fields
  }
}

/// A scripted HTTP server behind `URLProtocol`: each test gets its own host, answers from
/// a queue per method, and records what it was asked. Nothing touches the network.
final class StubServer: Sendable {
  typealias Answer = @Sendable (SeenRequest) -> (status: Int, body: String)

  let host = "stub-\(UUID().uuidString.lowercased()).test"
  private let state = Mutex<(answers: [String: [Answer]], seen: [SeenRequest])>(([:], []))

  static let servers = Mutex<[String: StubServer]>([:])

  init() { Self.servers.withLock { $0[host] = self } }

  var baseURL: URL {
    var components = URLComponents()
    components.scheme = "https"
    components.host = host
    return components.url ?? URL(fileURLWithPath: "/")
  }

  /// An `Auth` that talks to this stub.
  func auth(store: any SessionStore = MemorySessionStore()) -> Auth {
    let configuration = URLSessionConfiguration.ephemeral
    configuration.protocolClasses = [StubProtocol.self]
    let auth = Auth(
      baseURL: baseURL, apiKey: "test-key", sessionStore: store,
      urlSession: URLSession(configuration: configuration))
    // Tests run no main queue: listeners and completions go to a queue of their own,
    // which `drain` waits on.
    auth.callbackQueue = DispatchQueue(label: "anonauth-client-test-callbacks")
    return auth
  }

  /// Queues an answer for the next call of `method` ("accounts:signUp", "token").
  func on(_ method: String, status: Int = 200, _ body: String) {
    on(method) { _ in (status, body) }
  }

  func on(_ method: String, _ answer: @escaping Answer) {
    state.withLock { $0.answers[method, default: []].append(answer) }
  }

  var seen: [SeenRequest] { state.withLock { $0.seen } }
  var methods: [String] { seen.map(\.method) }

  func answer(_ request: SeenRequest) -> (status: Int, body: String) {
    let answer: Answer? = state.withLock { state in
      state.seen.append(request)
      guard var queue = state.answers[request.method], !queue.isEmpty else { return nil }
      let first = queue.removeFirst()
      state.answers[request.method] = queue
      return first
    }
    return answer?(request) ?? (404, #"{"error":{"code":404,"message":"NOT_SCRIPTED"}}"#)
  }

  // MARK: Canned answers

  /// A stub whose first sign-up and lookup answer an anonymous user "u1": where most tests
  /// start, before the answer they are about is queued.
  static func anonymousU1() -> StubServer {
    let stub = StubServer()
    stub.on("accounts:signUp", signIn(uid: "u1"))
    stub.on("accounts:lookup", lookup(uid: "u1"))
    return stub
  }

  static func signIn(
    uid: String, idToken: String = "id-1", refreshToken: String = "refresh-1", expiresIn: String = "3600"
  ) -> String {
    #"{"kind":"identitytoolkit#SignupNewUserResponse","idToken":"\#(idToken)","#
      + #""refreshToken":"\#(refreshToken)","expiresIn":"\#(expiresIn)","localId":"\#(uid)"}"#
  }

  static func lookup(uid: String, email: String? = nil, providers: [String] = []) -> String {
    let infos = providers.map { #"{"providerId":"\#($0)","rawId":"raw-\#($0)"}"# }.joined(separator: ",")
    let emailField = email.map { #","email":"\#($0)""# } ?? ""
    return #"{"users":[{"localId":"\#(uid)"\#(emailField),"providerUserInfo":[\#(infos)]}]}"#
  }

  static func error(_ message: String) -> String {
    #"{"error":{"code":400,"message":"\#(message)","#
      + #""errors":[{"message":"\#(message)","domain":"global","reason":"invalid"}]}}"#
  }
}

/// Hands every request to the `StubServer` of its host.
final class StubProtocol: URLProtocol {

  override class func canInit(with request: URLRequest) -> Bool { true }
  override class func canonicalRequest(for request: URLRequest) -> URLRequest { request }

  override func startLoading() {
    guard let url = request.url else { return }
    let server = StubServer.servers.withLock { $0[url.host ?? ""] }
    let seen = SeenRequest(
      method: url.lastPathComponent, scheme: url.scheme ?? "", port: url.port, path: url.path,
      query: url.query ?? "",
      contentType: request.value(forHTTPHeaderField: "Content-Type") ?? "", body: Self.body(of: request))
    guard let server else {
      client?.urlProtocol(self, didFailWithError: URLError(.cannotConnectToHost))
      return
    }
    let (status, body) = server.answer(seen)
    if status == 0 {
      client?.urlProtocol(self, didFailWithError: URLError(.notConnectedToInternet))
      return
    }
    let headers = ["Content-Type": "application/json"]
    if let response = HTTPURLResponse(
      url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: headers)
    {
      client?.urlProtocol(self, didReceive: response, cacheStoragePolicy: .notAllowed)
    }
    client?.urlProtocol(self, didLoad: Data(body.utf8))
    client?.urlProtocolDidFinishLoading(self)
  }

  override func stopLoading() {}

  /// URLSession hands a protocol the body as a stream on some platforms.
  static func body(of request: URLRequest) -> Data {
    if let body = request.httpBody { return body }
    guard let stream = request.httpBodyStream else { return Data() }
    stream.open()
    defer { stream.close() }
    var data = Data()
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
      let n = stream.read(&buffer, maxLength: buffer.count)
      if n <= 0 { break }
      data.append(buffer, count: n)
    }
    return data
  }
}

extension Auth {
  /// Waits until every listener call and completion queued so far has run.
  func drain() { callbackQueue.sync {} }
}
