import AnonAuthWire

/// A gRPC method the gRPC transport serves itself instead of through the router: the
/// standard services (`grpc.health.v1.Health`, server reflection), whose calls may
/// stream both ways and exist only on gRPC. Their calls take a slot of the connection
/// like any other call (`ConnectionCalls.startTask`), are cancelled when the stream is
/// reset or the connection closes, and need no credential.
protocol GRPCLocalMethod: Sendable {
  /// The method's path, e.g. "/grpc.health.v1.Health/Watch".
  var path: String { get }
  /// Whether the call has a deadline by default (unary methods: the server's default
  /// call timeout, as router calls do); false for streams that live as long as the
  /// client wants (Watch, reflection), which end at `grpc-timeout` only when one is sent.
  var hasDefaultDeadline: Bool { get }
  /// Runs one call: reads the client's messages from `requests` (each one decoded from
  /// its length prefix; the sequence ends when the client half-closes), sends with
  /// `responses`, and returns the status the trailers carry. Cancelled (task
  /// cancellation) when the stream ends early.
  func run(requests: AsyncStream<[UInt8]>, responses: GRPCResponseWriter) async -> GRPCFinalStatus
}

/// How a local method sends its response messages: each is framed with its length
/// prefix and queued on the stream. `send` waits while the peer's flow-control window
/// keeps too much queued, and returns false once the stream is gone (stop then).
struct GRPCResponseWriter: Sendable {
  let send: @Sendable ([UInt8]) async -> Bool

  init(send: @escaping @Sendable ([UInt8]) async -> Bool) {
    self.send = send
  }
}

/// The status a call ends with, as its trailers carry it.
struct GRPCFinalStatus: Sendable, Equatable {
  var code: StatusCode
  var message: String

  init(_ code: StatusCode, _ message: String = "") {
    self.code = code
    self.message = message
  }

  static let ok = GRPCFinalStatus(.ok)
}
