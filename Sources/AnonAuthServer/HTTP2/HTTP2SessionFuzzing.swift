import AnonAuthNet
import AnonAuthService

/// Raw bytes into a whole HTTP/2 server session (`HTTP2ServerConnection` and libnghttp2,
/// its stream dispatch and the handlers that answer without a task: the JSON API with no
/// application, gRPC with no handler), over a socketless byte stream. Visible to the
/// fuzz target through `@_spi(Fuzzing)`, and to no one else.
///
/// Byte 0: bit 0 prepends the client connection preface (so mutations reach the frame
/// layer), the other bits size the pieces the rest is fed in. After the session, every
/// byte charged to the receive budget is given back.
@_spi(Fuzzing) public enum HTTP2SessionFuzzing {
  private static let setup: (loop: EventLoop, core: ServerCore)? = {
    guard let loop = try? EventLoop(name: "fuzz-h2"), let listen = try? SocketAddress(parsing: "127.0.0.1:0")
    else { return nil }
    var config = RPCServerConfig(listen: listen)
    config.maxConcurrentCallsPerConnection = 4
    let core = ServerCore(
      config: config, router: Router(), logger: Logger(minimum: .error, sink: { _ in }),
      metrics: ServerMetrics())
    return (loop, core)
  }()

  static let preface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)

  @_spi(Fuzzing) public static func run(_ data: [UInt8]) {
    guard let setup, let first = data.first else { return }
    let input = (first & 1 == 1 ? preface : []) + data.dropFirst()
    let step = Int(first >> 1) + 1
    let stream = SocketlessStream(loop: setup.loop)
    let connection = HTTP2ServerConnection(stream: stream, core: setup.core, registry: nil)
    var index = 0
    while index < input.count && stream.isOpen {
      let end = min(input.count, index + step)
      input[index..<end].withUnsafeBytes { connection.stream(stream, didReceive: $0) }
      index = end
    }
    connection.streamDidClose(stream, error: nil)
    precondition(setup.core.receiveBudget.totalBytes == 0, "a closed session still holds budget")
  }

  /// Keeps nothing it is sent; closing only marks it closed (the caller reports it).
  private final class SocketlessStream: ByteStream {
    let loop: EventLoop
    var peer: SocketAddress? { nil }
    private(set) var isOpen = true
    var lastActivity: UInt64 = 0
    var verifiedPeerName: String? { nil }
    var hasPendingOutput: Bool { false }
    var readingHeld = false
    var readBudgetBytes = 0
    var deprioritized = false
    var readPaused: Bool { false }

    init(loop: EventLoop) { self.loop = loop }

    func send(bytes: [UInt8]) {}
    func closeGracefully() { isOpen = false }
    func close(error: (any Error)?) { isOpen = false }
  }
}
