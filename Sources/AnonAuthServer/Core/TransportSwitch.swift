import AnonAuthNet

/// The one place where a TLS handshake's ALPN choice picks the transport that serves
/// the connection (docs/protocol.md §1): `anonauth/1`, or no ALPN at all, keeps the
/// native frames; `http/1.1` is served by `HTTPServerConnection`; `h2` by the HTTP/2
/// connection. Every transport runs its calls through the same `ConnectionCalls` core.
enum TransportSwitch {
  /// What a connection speaks once its handshake is done.
  enum Choice: Equatable {
    /// `anonauth/1` frames (also when the client offered no ALPN).
    case native
    /// HTTP/1.1 with the Firebase-compatible JSON API.
    case http1
    /// HTTP/2: gRPC, and the JSON API for other content types.
    case http2
  }

  /// The transport for the protocol the handshake chose. The server only ever selects a
  /// name it offers (`TLSContext.serverProtocols`), so an unknown name cannot arrive;
  /// it would be served as native frames, which is what a client without ALPN gets.
  static func choice(alpn: String?) -> Choice {
    switch alpn {
    case TLSContext.http11: return .http1
    case TLSContext.h2: return .http2
    default: return .native
    }
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
