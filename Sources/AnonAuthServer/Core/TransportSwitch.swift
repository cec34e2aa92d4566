import AnonAuthNet

/// The one place where a TLS handshake's ALPN choice picks the transport that serves
/// the connection (docs/protocol.md §1): `anonauth/1` keeps the native frames; `http/1.1`
/// is served by `HTTPServerConnection`; `h2` by the HTTP/2 connection. With no ALPN at
/// all, the first bytes decide (`sniff`): an HTTP request line is HTTP/1.1 (what Python's
/// `urllib` and Node's `https` send), anything else native frames. Every transport runs
/// its calls through the same `ConnectionCalls` core.
enum TransportSwitch {
  /// What a connection speaks once its handshake is done.
  enum Choice: Equatable {
    /// `anonauth/1` frames.
    case native
    /// HTTP/1.1 with the Firebase-compatible JSON API.
    case http1
    /// HTTP/2: gRPC, and the JSON API for other content types.
    case http2
  }

  /// The transport for the protocol the handshake chose, or nil when the client offered
  /// no ALPN: then the first bytes decide (`sniff`). The server only ever selects a name
  /// it offers (`TLSContext.serverProtocols`), so an unknown name cannot arrive; it would
  /// be served as native frames.
  static func choice(alpn: String?) -> Choice? {
    switch alpn {
    case nil: return nil
    case TLSContext.http11: return .http1
    case TLSContext.h2: return .http2
    default: return .native
    }
  }

  /// What a connection without ALPN speaks, judged from its first bytes.
  enum Sniffed: Equatable {
    case decided(Choice)
    /// The bytes so far begin an HTTP request line but are too few to tell.
    case needMore
  }

  /// The methods whose request line (the method and one space) makes a connection without
  /// ALPN HTTP/1.1. A native frame never begins with one: its first four bytes are the
  /// big-endian length, and the smallest these spell ("DELE", 0x44454C45) is 1,145,392,197
  /// bytes, over the largest `--max-frame-size` (64 MiB) by far (docs/protocol.md §1).
  static let requestLineMethods: [[UInt8]] = ["GET", "POST", "PUT", "DELETE", "HEAD", "OPTIONS", "PATCH"]
    .map { Array($0.utf8) + [0x20] }

  /// The longest prefix `sniff` may ask for ("OPTIONS ").
  static let longestSniff = requestLineMethods.map(\.count).max() ?? 0

  /// HTTP/1.1 when `prefix` begins with a method of `requestLineMethods` and a space;
  /// native frames as soon as it cannot; `needMore` while it still may.
  static func sniff(_ prefix: some Collection<UInt8>) -> Sniffed {
    var undecided = false
    for method in requestLineMethods {
      if prefix.starts(with: method) { return .decided(.http1) }
      if method.starts(with: prefix) { undecided = true }
    }
    return undecided ? .needMore : .decided(.native)
  }

  /// The connection that serves a byte-level transport over `stream`, or nil for the
  /// native frames (served by the connection that already owns the stream). The caller
  /// puts the returned connection in the registry and gives it the stream's bytes.
  static func byteTransport(
    _ choice: Choice, stream: any ByteStream, core: ServerCore, registry: ConnectionRegistry
  ) -> (any ServedConnection & ByteStreamDelegate)? {
    switch choice {
    case .native:
      return nil
    case .http1:
      return HTTPServerConnection(stream: stream, listener: .rpcPort, core: core, registry: registry)
    case .http2:
      return HTTP2ServerConnection(stream: stream, core: core, registry: registry)
    }
  }
}
