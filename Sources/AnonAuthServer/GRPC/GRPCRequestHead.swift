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
  /// `x-request-id` as sent (also in `metadata`): read here so the call does not look
  /// it up again by hashing.
  var requestID: String?
  /// The metadata fields sent, and their names' and values' bytes: bounded by
  /// `CallLimits` as every call's metadata is (docs/protocol.md §7).
  var metadataEntries = 0
  var metadataBytes = 0

  /// Headers that are HTTP/2's or gRPC's own and never metadata: pseudo-headers
  /// (":path"...) and every `grpc-` name are dropped by prefix; these by name. Matched by
  /// length first, then compared: every request's every header is looked up here, and
  /// most names (the metadata) match none, which their length alone says.
  static func isReserved(_ name: String) -> Bool {
    switch name.utf8.count {
    case 2: name == "te"
    case 4: name == "host"
    case 7: name == "upgrade"
    case 10: name == "connection" || name == "keep-alive"
    case 12: name == "content-type"
    case 14: name == "content-length"
    case 16: name == "proxy-connection"
    case 17: name == "transfer-encoding"
    default: false
    }
  }

  /// Whether `name` starts with `grpc-`: the first byte first, which rules out most
  /// names at once (`starts(with:)` on the views costs more than the whole check).
  static func isGRPCName(_ name: String) -> Bool {
    let utf8 = name.utf8
    guard utf8.first == UInt8(ascii: "g"), utf8.count >= 5 else { return false }
    var bytes = utf8.makeIterator()
    for expected in "grpc-".utf8 where bytes.next() != expected { return false }
    return true
  }

  init(headers: [HTTP2Header]) {
    method = ""
    path = ""
    timeoutNanos = nil
    malformedTimeout = nil
    encoding = nil
    metadata = [:]
    requestID = nil
    for header in headers {
      let name = header.name
      if name.utf8.first == UInt8(ascii: ":") {
        if name == ":method" {
          method = header.value
        } else if name == ":path" {
          path = header.value
        }
      } else if Self.isGRPCName(name) {
        if name == "grpc-timeout" {
          if let nanos = GRPCTimeout.nanoseconds(header.value) {
            timeoutNanos = nanos
          } else {
            malformedTimeout = header.value
          }
        } else if name == "grpc-encoding" {
          encoding = header.value
        }
      } else if !Self.isReserved(name) {
        metadataEntries += 1
        metadataBytes += name.utf8.count + header.value.utf8.count
        // A key sent more than once: its values joined with commas, as HTTP combines
        // repeated fields.
        if name == "x-request-id" { requestID = requestID.map { $0 + "," + header.value } ?? header.value }
        if let earlier = metadata[name] {
          metadata[name] = earlier + "," + header.value
        } else {
          metadata[name] = header.value
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
