import AnonAuthWire

/// What a gRPC request's header block says, read once when the stream opens: the
/// method path, the deadline, the compression, and the metadata the router's services
/// see (the same keys the native transport's `Call.metadata` carries, docs/protocol.md
/// §3).
struct GRPCRequestHead: Equatable {
  var method: String
  var path: String
  /// `grpc-timeout` in nanoseconds; nil when none was sent.
  var timeoutNanos: UInt64?
  /// Set when `grpc-timeout` was sent but does not parse.
  var malformedTimeout: String?
  /// `grpc-encoding`, when the client sent one.
  var encoding: String?
  var metadata: [String: String]
  /// The metadata fields sent, and their names' and values' bytes: bounded by
  /// `CallLimits` as every call's metadata is (docs/protocol.md §7).
  var metadataEntries = 0
  var metadataBytes = 0

  /// Headers that are HTTP/2's or gRPC's own and never metadata: pseudo-headers
  /// (":path"...) and every `grpc-` name are dropped by prefix; these by name.
  static let reservedNames: Set<String> = [
    "content-type", "te", "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade",
    "host", "content-length",
  ]

  init(headers: [HTTP2Header]) {
    method = ""
    path = ""
    timeoutNanos = nil
    malformedTimeout = nil
    encoding = nil
    metadata = [:]
    for header in headers {
      switch header.name {
      case ":method":
        method = header.value
      case ":path":
        path = header.value
      case "grpc-timeout":
        if let nanos = GRPCTimeout.nanoseconds(header.value) {
          timeoutNanos = nanos
        } else {
          malformedTimeout = header.value
        }
      case "grpc-encoding":
        encoding = header.value
      default:
        guard !header.name.hasPrefix(":"), !header.name.hasPrefix("grpc-"),
          !Self.reservedNames.contains(header.name)
        else { continue }
        metadataEntries += 1
        metadataBytes += header.name.utf8.count + header.value.utf8.count
        // A key sent more than once: its values joined with commas, as HTTP combines
        // repeated fields.
        if let earlier = metadata[header.name] {
          metadata[header.name] = earlier + "," + header.value
        } else {
          metadata[header.name] = header.value
        }
      }
    }
  }

  /// Whether the metadata is over `CallLimits.maxMetadataEntries` or
  /// `maxMetadataBytes`.
  var metadataOverLimits: Bool {
    metadataEntries > CallLimits.maxMetadataEntries || metadataBytes > CallLimits.maxMetadataBytes
  }

  /// Whether messages may be compressed with an algorithm the server does not have:
  /// any `grpc-encoding` but `identity` (the server decodes none, so it says so before
  /// reading a message, as grpc-java does).
  var hasUnsupportedEncoding: Bool {
    guard let encoding else { return false }
    return encoding.lowercased() != "identity"
  }
}
