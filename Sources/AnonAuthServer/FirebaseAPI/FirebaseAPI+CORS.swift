extension FirebaseAPI {
  /// What a preflight allows besides the origin: Firebase's web SDK sends JSON with
  /// `x-client-version` and `x-firebase-*` headers, and may send the key as a header.
  static let corsAllowedHeaders =
    "content-type, x-goog-api-key, x-client-version, x-firebase-gmpid, x-firebase-client, "
    + "x-firebase-appcheck, x-firebase-locale, x-request-id, authorization"
  /// How long a browser may reuse a preflight's answer.
  static let corsMaxAgeSeconds = "3600"

  /// The API key of a request as the browser sends it: a preflight carries the query
  /// string but not the request's own headers, so only `?key=` counts there.
  static func apiKey(of request: HTTPRequest) -> String? {
    FormDecoding.fields(request.query)["key"] ?? request.header("x-goog-api-key")
  }

  /// Whether the request's `Origin` is one the project of its API key allows.
  func allows(origin: String, for request: HTTPRequest) -> Bool {
    corsOrigins(Self.apiKey(of: request)).contains(origin)
  }

  /// `OPTIONS`: 204 with the CORS headers for an origin the key's project allows, on a
  /// path some endpoint serves; 403 in Firebase's error body (no CORS headers, so the
  /// browser refuses the real request) for any other origin; 404 for an unknown path.
  /// Preflights make no native call and log no call line.
  func preflight(_ request: HTTPRequest) -> HTTPReply {
    let path = FirebaseAPIPath(request.path)
    let methods = Set(index.matches(path.segments).map(\.endpoint.httpMethod))
    guard !methods.isEmpty else { return FirebaseError.notFound(path: request.path).reply }
    guard let origin = request.header("origin"), allows(origin: origin, for: request) else {
      var reply = FirebaseError(
        status: 403,
        message: "CORS_ORIGIN_NOT_ALLOWED : the project of this API key does not allow this origin",
        statusName: "PERMISSION_DENIED"
      ).reply
      reply.headers.append(("vary", "Origin"))
      return reply
    }
    return HTTPReply(
      status: 204,
      headers: [
        ("access-control-allow-origin", origin),
        ("access-control-allow-methods", (methods.sorted() + ["OPTIONS"]).joined(separator: ", ")),
        ("access-control-allow-headers", Self.corsAllowedHeaders),
        ("access-control-max-age", Self.corsMaxAgeSeconds), ("vary", "Origin"),
      ])
  }

  /// An answer to a browser's request: `Access-Control-Allow-Origin` for an allowed
  /// origin, nothing for another (the browser then hides the answer from the page), and
  /// `Vary: Origin` whenever there was an origin, so caches keep them apart.
  func addCORSHeaders(to reply: inout HTTPReply, for request: HTTPRequest) {
    guard let origin = request.header("origin") else { return }
    if allows(origin: origin, for: request) {
      reply.headers.append(("access-control-allow-origin", origin))
      reply.headers.append(("access-control-expose-headers", "x-request-id, retry-after"))
    }
    reply.headers.append(("vary", "Origin"))
  }
}
