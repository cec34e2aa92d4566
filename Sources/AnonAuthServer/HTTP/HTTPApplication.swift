/// One HTTP request as the HTTP/1.1 (and later HTTP/2) transport hands it to an
/// application: already bounded (head and body sizes), framed by `Content-Length`, with
/// header names lowercased. The application never sees the socket.
public struct HTTPRequest: Sendable {
  /// "GET", "POST", "OPTIONS"... as sent (methods are case-sensitive).
  public var method: String
  /// The request target's path, before `?`, still percent-encoded.
  public var path: String
  /// The query string after `?` (percent-encoded), or "" when there is none.
  public var query: String
  /// In the order received; names lowercased.
  public var headers: [(name: String, value: String)]
  public var body: [UInt8]

  public init(
    method: String, path: String, query: String = "", headers: [(name: String, value: String)] = [],
    body: [UInt8] = []
  ) {
    self.method = method
    self.path = path
    self.query = query
    self.headers = headers
    self.body = body
  }

  /// The first value of a header; `name` is lowercase.
  public func header(_ name: String) -> String? {
    headers.first { $0.name == name }?.value
  }
}

/// The application's answer; the transport adds `Content-Length`, `Date` and the
/// connection headers.
public struct HTTPReply: Sendable {
  public var status: Int
  public var headers: [(name: String, value: String)]
  public var body: [UInt8]

  public init(status: Int, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
    self.status = status
    self.headers = headers
    self.body = body
  }
}

/// Which listener a request arrived on: the emulator listener is plain HTTP on a
/// loopback address, where the Firebase Admin SDK's `Bearer owner` stands for the
/// admin key (docs/http-admin-api.md says why that is safe only there).
public enum HTTPListenerKind: Sendable, Equatable {
  /// The RPC port, by ALPN `http/1.1` (or `h2`): TLS, open to the network.
  case rpcPort
  /// `--firebase-emulator-listen`: plain HTTP, loopback only.
  case emulator
}

/// What the transport knows about the caller of one request.
public struct HTTPCallInfo: Sendable {
  /// The socket peer's IP address (no port), for quotas and trusted-proxy checks.
  public var peerIP: String?
  /// The common name of a verified client certificate (mutual TLS), or nil.
  public var clientCertificateName: String?
  public var listener: HTTPListenerKind
  /// The caller's `x-request-id` (cut to 128 scalars) or one the transport made.
  public var requestID: String

  public init(
    peerIP: String?, clientCertificateName: String? = nil, listener: HTTPListenerKind, requestID: String
  ) {
    self.peerIP = peerIP
    self.clientCertificateName = clientCertificateName
    self.listener = listener
    self.requestID = requestID
  }
}

/// What serves requests on an HTTP transport: the Firebase-compatible JSON API. The
/// transport runs each request in a task that is cancelled when the request's deadline
/// passes or its connection closes; the application checks `Task.isCancelled` through
/// the router as native calls do.
public protocol HTTPApplication: Sendable {
  func respond(to request: HTTPRequest, info: HTTPCallInfo) async -> HTTPReply

  /// Whether the request whose head (body still empty) this is may bring a body up to
  /// `maxFrameSize` rather than `maxUnauthenticatedFrameSize`: true only for requests
  /// that carry a valid admin key (imports), as a native connection's frame limit is
  /// raised only after an admin-key call. Called on the event loop: must be cheap.
  func admitsLargeBody(_ head: HTTPRequest) -> Bool

  /// The same, knowing the listener the request came on (the emulator listener takes
  /// the Admin SDK's `Bearer owner` as the admin key). The transport calls this one.
  func admitsLargeBody(_ head: HTTPRequest, listener: HTTPListenerKind) -> Bool
}

extension HTTPApplication {
  /// Every body within `maxUnauthenticatedFrameSize`.
  public func admitsLargeBody(_ head: HTTPRequest) -> Bool { false }

  /// `admitsLargeBody(head)`, whatever the listener.
  public func admitsLargeBody(_ head: HTTPRequest, listener: HTTPListenerKind) -> Bool {
    admitsLargeBody(head)
  }
}
