import Glibc

/// The Firebase JSON API on HTTP/2 streams (any content type but gRPC's): builds the
/// `HTTPRequest` the HTTP/1.1 transport would, with the same limits (a 64 KiB body, or
/// 4 MiB for a request the application admits; 413 as soon as a declared or received
/// length is over, before the rest is read), runs it through `ConnectionCalls.startTask`
/// (a slot, the body charged, 504 at the deadline) and answers HEADERS + DATA. One per
/// connection, on its loop.
final class HTTP2JSONStreamHandler: HTTP2StreamHandler {
  private final class Pending {
    var request: HTTPRequest
    let limit: Int
    let requestID: String
    /// Answered already (413, 404...): the rest of the body is dropped.
    var answered = false

    init(request: HTTPRequest, limit: Int, requestID: String) {
      self.request = request
      self.limit = limit
      self.requestID = requestID
    }
  }

  /// Headers the transport writes itself, and HTTP/1.1 connection headers HTTP/2
  /// forbids (RFC 9113 §8.2.2): an application's copy is dropped.
  static let transportHeaders: Set<String> = [
    "content-length", "transfer-encoding", "connection", "date", "keep-alive", "x-request-id", "upgrade",
    "proxy-connection", "te",
  ]

  private let core: ServerCore
  private var pending: [Int32: Pending] = [:]

  init(core: ServerCore) { self.core = core }

  func streamOpened(_ stream: Int32, headers: [HTTP2Header], endStream: Bool, session: any HTTP2StreamSink) {
    var method = ""
    var target = ""
    var authority: String?
    var fields: [(name: String, value: String)] = []
    for header in headers {
      switch header.name {
      case ":method": method = header.value
      case ":path": target = header.value
      case ":authority": authority = header.value
      default:
        if !header.name.hasPrefix(":") { fields.append((header.name, header.value)) }
      }
    }
    if let authority, !fields.contains(where: { $0.name == "host" }) { fields.append(("host", authority)) }
    let parts = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
    let request = HTTPRequest(
      method: method, path: String(parts.first ?? ""), query: parts.count > 1 ? String(parts[1]) : "",
      headers: fields)
    let requestID = ConnectionCalls.requestID(request.header("x-request-id"))
    let large = core.httpApplication?.admitsLargeBody(request, listener: .rpcPort) ?? false
    let limit = large ? core.config.maxFrameSize : core.config.maxUnauthenticatedFrameSize
    let call = Pending(request: request, limit: limit, requestID: requestID)
    pending[stream] = call
    if let declared = request.header("content-length").flatMap({ Int($0) }), declared > limit {
      answer(stream, call, Self.tooLarge(limit), session: session)
      return
    }
    if endStream { start(stream, call, session: session) }
  }

  func stream(
    _ stream: Int32, received bytes: UnsafeRawBufferPointer, endStream: Bool, session: any HTTP2StreamSink
  ) {
    guard let call = pending[stream], !call.answered else { return }
    if call.request.body.count + bytes.count > call.limit {
      answer(stream, call, Self.tooLarge(call.limit), session: session)
      return
    }
    call.request.body.append(contentsOf: bytes)
    if endStream { start(stream, call, session: session) }
  }

  func streamClosed(_ stream: Int32, errorCode: UInt32, session: any HTTP2StreamSink) {
    pending[stream] = nil
    session.calls.cancel(id: UInt64(UInt32(bitPattern: stream)))
  }

  private static func tooLarge(_ limit: Int) -> HTTPReply {
    HTTPReplyEncoder.errorReply(status: 413, message: "the request body is larger than \(limit) bytes")
  }

  private func start(_ stream: Int32, _ call: Pending, session: any HTTP2StreamSink) {
    guard let application = core.httpApplication else {
      answer(
        stream, call, HTTPReplyEncoder.errorReply(status: 404, message: "no HTTP API is served here"),
        session: session)
      return
    }
    let request = call.request
    call.request.body = []  // the task holds it now (charged as the call's payload)
    let info = HTTPCallInfo(
      peerIP: session.peerHost, clientCertificateName: session.clientCertificateName, listener: .rpcPort,
      requestID: call.requestID)
    let admission = session.calls.startTask(
      id: UInt64(UInt32(bitPattern: stream)), payloadBytes: request.body.count,
      timeoutNanos: core.config.effectiveTimeoutMs(requested: 0) * 1_000_000,
      work: { await application.respond(to: request, info: info) },
      answer: { [weak self, weak session] reply in
        guard let self, let session else { return }
        self.answer(stream, call, reply, session: session)
      },
      expired: { [weak self, weak session] in
        guard let self, let session else { return }
        self.answer(
          stream, call, HTTPReplyEncoder.errorReply(status: 504, message: "the request's deadline passed"),
          session: session)
      })
    switch admission {
    case .admitted:
      break
    case .refused(let error):
      let status = session.calls.goingAway ? 503 : 429
      answer(
        stream, call, HTTPReplyEncoder.errorReply(status: status, message: error.message), session: session)
    case .idInUse:
      answer(
        stream, call, HTTPReplyEncoder.errorReply(status: 500, message: "stream id in use"), session: session)
    }
  }

  /// Sends `reply` on the stream: `:status`, the application's headers, then
  /// `content-length`, `date` and `x-request-id`; the body as DATA (none for HEAD).
  private func answer(_ stream: Int32, _ call: Pending, _ reply: HTTPReply, session: any HTTP2StreamSink) {
    guard !call.answered else { return }
    call.answered = true
    var headers = [HTTP2Header(":status", String(reply.status))]
    for (name, value) in reply.headers {
      let lower = name.lowercased()
      guard !lower.isEmpty, !Self.transportHeaders.contains(lower), Self.isSafe(lower), Self.isSafe(value)
      else {
        continue
      }
      headers.append(HTTP2Header(lower, value))
    }
    headers.append(HTTP2Header("content-length", String(reply.body.count)))
    headers.append(HTTP2Header("date", HTTPReplyEncoder.httpDate(time(nil))))
    if Self.isSafe(call.requestID) { headers.append(HTTP2Header("x-request-id", call.requestID)) }
    if reply.body.isEmpty || call.request.method == "HEAD" {
      session.sendHeaders(stream, headers, endStream: true)
    } else {
      session.sendHeaders(stream, headers, endStream: false)
      session.sendData(stream, reply.body, endStream: true)
    }
  }

  private static func isSafe(_ text: String) -> Bool {
    !text.utf8.contains { $0 == 13 || $0 == 10 || $0 == 0 }
  }
}
