import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Calls Firebase's REST API at a base URL: `POST {base}/v1/accounts:<method>?key=K` with
/// a JSON body, and the token endpoint `POST {base}/v1/token?key=K` with a form. Every
/// failure becomes an `AuthError`.
struct RESTTransport: Sendable {
  var baseURL: URL
  let apiKey: String
  let session: URLSession
  /// The Firebase Auth Emulator's layout: the APIs' host names as the first path
  /// component (`/identitytoolkit.googleapis.com/v1/...`, `/securetoken.googleapis.com/v1/token`).
  var emulatorLayout = false
  /// True in the `Auth` that `Auth.auth()` returns before `Auth.configure`.
  var unconfigured = false
  /// `Auth.languageCode`, sent as `X-Firebase-Locale` as Firebase's SDKs send it.
  var languageCode: String?

  /// One `accounts:` call.
  /// - Parameter version: "v1", or "v2" for the Identity Platform calls FirebaseAuth
  ///   makes there (`accounts:revokeToken`).
  func accounts<Body: Encodable, Reply: Decodable>(
    _ method: String, _ body: Body, as: Reply.Type = Reply.self, version: String = "v1"
  ) async throws(AuthError) -> Reply {
    let data: Data
    do {
      data = try JSONEncoder().encode(body)
    } catch {
      throw AuthError(.internalError, message: "could not encode the request: \(error)")
    }
    let path = "\(version)/accounts:\(method)"
    return try await post(
      emulatorLayout ? "identitytoolkit.googleapis.com/\(path)" : path, data, contentType: "application/json")
  }

  /// The token endpoint: a refresh token for a new ID token (and, perhaps, a new refresh
  /// token).
  func refresh(_ refreshToken: String) async throws(AuthError) -> TokenReply {
    let form = FormEncoding.encode([("grant_type", "refresh_token"), ("refresh_token", refreshToken)])
    return try await post(
      emulatorLayout ? "securetoken.googleapis.com/v1/token" : "v1/token", Data(form.utf8),
      contentType: "application/x-www-form-urlencoded")
  }

  /// Plain HTTP to `host:port` in the emulator's layout. A host that is not a valid URL
  /// host keeps the old base, and calls fail as they would have.
  mutating func useEmulator(host: String, port: Int) {
    var components = URLComponents()
    components.scheme = "http"
    components.host = host
    components.port = port
    if let url = components.url {
      baseURL = url
      emulatorLayout = true
    }
  }

  /// The URL of a path under the base, with the API key; the base may carry a path of its
  /// own (`https://host/auth`) and a trailing slash or not.
  func url(_ path: String) throws(AuthError) -> URL {
    if unconfigured {
      throw AuthError(.internalError, message: "call Auth.configure(baseURL:apiKey:) before Auth.auth()")
    }
    var base = baseURL.absoluteString
    while base.hasSuffix("/") { base.removeLast() }
    guard let url = URL(string: "\(base)/\(path)?key=\(FormEncoding.escape(apiKey))") else {
      throw AuthError(.internalError, message: "not a URL: \(base)/\(path)")
    }
    return url
  }

  private func post<Reply: Decodable>(
    _ path: String, _ body: Data, contentType: String
  ) async throws(AuthError) -> Reply {
    var request = URLRequest(url: try url(path))
    request.httpMethod = "POST"
    request.httpBody = body
    request.setValue(contentType, forHTTPHeaderField: "Content-Type")
    request.setValue("application/json", forHTTPHeaderField: "Accept")
    if let languageCode { request.setValue(languageCode, forHTTPHeaderField: "X-Firebase-Locale") }
    let data: Data
    let response: URLResponse
    do {
      (data, response) = try await session.data(for: request)
    } catch {
      throw AuthError(.networkError, message: "\(error)")
    }
    let status = (response as? HTTPURLResponse)?.statusCode ?? 0
    guard (200..<300).contains(status) else { throw Self.error(status: status, body: data) }
    do {
      // An empty 2xx body reads as `{}` (what `accounts:delete` needs, whichever it sends).
      return try JSONDecoder().decode(Reply.self, from: data.isEmpty ? Data("{}".utf8) : data)
    } catch {
      throw AuthError(.networkError, message: "HTTP \(status) with a body that is not the expected JSON")
    }
  }

  /// The error of a non-2xx answer: Firebase's error body mapped by its message; anything
  /// else (a proxy's page, an empty body) is a network error, as in Firebase's SDKs.
  static func error(status: Int, body: Data) -> AuthError {
    guard let reply = try? JSONDecoder().decode(ErrorReply.self, from: body) else {
      return AuthError(.networkError, message: "HTTP \(status) without Firebase's error body")
    }
    return AuthError(AuthError.code(ofServerMessage: reply.error.message), message: reply.error.message)
  }
}
