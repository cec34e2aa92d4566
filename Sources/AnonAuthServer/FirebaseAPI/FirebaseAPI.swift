import AnonAuthCrypto
import AnonAuthNet
import AnonAuthService
import AnonAuthWire

/// Firebase's client JSON API (Identity Toolkit v1 and the Secure Token API) served over
/// HTTP onto the native services: each request finds its endpoint, is decoded from JSON
/// (or a form), becomes one or more native calls through the same `Router` the binary
/// transport uses, and is answered in Firebase's field names and error body.
///
/// HTTP is only a transport: the API key goes to the native check as `x-api-key`
/// metadata, so quotas, throttles, limits and reasons are the native ones; metrics count
/// the native methods, and the one log line per request names the REST call.
public struct FirebaseAPI: HTTPApplication {
  let router: Router
  /// The endpoints, and which of them a path can reach.
  let index: EndpointIndex
  var endpoints: [Endpoint] { index.endpoints }
  let recordCall: @Sendable (FirebaseCallRecord) -> Void
  let corsOrigins: @Sendable (_ apiKey: String?) -> [String]
  /// --dev: the codes sent, for the emulator's `oobCodes` list.
  let devMailbox: DevMailbox?

  /// `recordCall` receives the one record of every request (the server logs it and counts
  /// its native method); `corsOrigins` gives the origins the project of an API key allows
  /// (none for an unknown key); `endpoints` defaults to every family this build serves.
  public init(
    router: Router, endpoints: [Endpoint] = FirebaseAPI.allEndpoints, devMailbox: DevMailbox? = nil,
    corsOrigins: @escaping @Sendable (_ apiKey: String?) -> [String] = { _ in [] },
    recordCall: @escaping @Sendable (FirebaseCallRecord) -> Void = { _ in }
  ) {
    self.router = router
    self.index = EndpointIndex(endpoints)
    self.corsOrigins = corsOrigins
    self.devMailbox = devMailbox
    self.recordCall = recordCall
  }

  public func respond(to request: HTTPRequest, info: HTTPCallInfo) async -> HTTPReply {
    if request.method == "OPTIONS" { return preflight(request) }
    var reply = await answer(request, info: info)
    addCORSHeaders(to: &reply, for: request)
    return reply
  }

  /// The reply before CORS: the endpoint's answer or the error.
  private func answer(_ request: HTTPRequest, info: HTTPCallInfo) async -> HTTPReply {
    let startedAt = MonotonicClock.now()
    let path = FirebaseAPIPath(request.path)
    let matches = index.matches(path.segments)
    guard !matches.isEmpty else {
      let error = FirebaseError.notFound(path: request.path)
      return finish(error.reply, name: "unknown", call: nil, error: error, startedAt: startedAt, info: info)
    }
    guard let (endpoint, parameters) = matches.first(where: { $0.0.httpMethod == request.method }) else {
      let error = FirebaseError.methodNotAllowed(request.method)
      var reply = error.reply
      reply.headers.append(("allow", Set(matches.map(\.0.httpMethod)).sorted().joined(separator: ", ")))
      return finish(reply, name: matches[0].0.name, call: nil, error: error, startedAt: startedAt, info: info)
    }
    let call: Call
    do throws(FirebaseError) {
      call = try Call(api: self, request: request, info: info, pathParameters: parameters)
    } catch {
      return finish(
        error.reply, name: endpoint.name, call: nil, error: error, startedAt: startedAt, info: info)
    }
    do throws(FirebaseError) {
      let body = try await endpoint.handle(call)
      let reply = HTTPReply(status: 200, headers: Self.jsonHeaders, body: body.jsonBytes)
      return finish(reply, name: endpoint.name, call: call, error: nil, startedAt: startedAt, info: info)
    } catch {
      return finish(
        error.reply, name: endpoint.name, call: call, error: error, startedAt: startedAt, info: info)
    }
  }

  static let jsonHeaders: [(name: String, value: String)] = [
    ("content-type", "application/json; charset=UTF-8"), ("cache-control", "no-store"),
  ]

  /// Reports the request's one record and hands back its reply.
  private func finish(
    _ reply: HTTPReply, name: String, call: Call?, error: FirebaseError?, startedAt: UInt64,
    info: HTTPCallInfo
  ) -> HTTPReply {
    recordCall(
      FirebaseCallRecord(
        name: name, nativeMethod: call?.lastNativeMethod, requestID: info.requestID,
        error: error?.loggedError,
        nanos: MonotonicClock.now() - startedAt, fields: call?.log ?? CallLogFields(),
        httpStatus: reply.status))
    return reply
  }
}
