import AnonAuthWire

/// The header block of a unary gRPC request, in the order gRPC's PROTOCOL-HTTP2 gives:
/// pseudo-headers first, then `te`, `content-type`, the timeout, and the call's metadata
/// as lowercase headers (HTTP/2 forbids uppercase names; gRPC metadata keys are
/// case-insensitive). Metadata that would repeat or override a reserved header is left
/// out, so a caller cannot turn the request into something else.
enum GRPCRequestHeaders {
  static let userAgent = "anonauth-swift-grpc/1"

  static func make(
    path: String, authority: String, timeoutMs: UInt32, metadata: [String: String]
  ) -> [(name: String, value: String)] {
    var headers: [(name: String, value: String)] = [
      (":method", "POST"), (":scheme", "https"), (":path", path), (":authority", authority),
      ("te", "trailers"), ("content-type", "application/grpc"),
      ("grpc-timeout", GRPCTimeout.header(milliseconds: timeoutMs)), ("user-agent", userAgent),
    ]
    for (name, value) in metadata.sorted(by: { $0.key < $1.key }) {
      let lower = name.lowercased()
      guard !lower.hasPrefix(":"), !reserved.contains(lower) else { continue }
      headers.append((lower, value))
    }
    return headers
  }

  /// Headers the transport itself sets, or that HTTP/2 forbids (connection-specific).
  static let reserved: Set<String> = [
    "te", "content-type", "grpc-timeout", "user-agent", "grpc-encoding", "grpc-accept-encoding",
    "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "host",
  ]
}
