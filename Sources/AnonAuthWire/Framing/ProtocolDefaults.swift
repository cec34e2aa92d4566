/// The contract's default numbers that both ends start from, declared once: the decoder
/// and the client (`ClientEndpoint`, `RPCClient`) use them as they are, the daemon as the
/// defaults of its settings (`--max-frame-size`, `--call-timeout-ms`).
public enum ProtocolDefaults {
  /// The largest frame body, 4 MiB unless the server is configured otherwise.
  public static let maxFrameSize = 4 * 1024 * 1024
  /// The deadline of a call whose `timeout_ms` is 0: 30 s.
  public static let callTimeoutMs: UInt32 = 30_000
}
