import COpenSSL
import Glibc
import Synchronization

/// Opens this process's connections to dqlite nodes: to a node of this process straight
/// through its abstract socket, to any other over TLS with this node's certificate (or in
/// plain TCP when the cluster runs `--cluster-insecure`). Both the embedded node's Raft
/// connections (`dqlite_node_set_connect_func`) and the store's client connections come
/// through here, so no byte for another machine leaves unencrypted.
///
/// A TLS connection is handed over as one end of a socket pair whose other end a
/// `TLSPump` thread carries through the TLS connection: libdqlite wants a plain socket
/// descriptor, and the store's client reads and writes one too.
public final class ClusterDialer: Sendable {
  /// The dialer of this process. One per process because libdqlite's connect callback
  /// gets no context; the daemon configures it before its node starts.
  public static let shared = ClusterDialer()

  private struct State {
    /// Nodes of this process: advertised address -> abstract socket name.
    var local: [String: String] = [:]
    /// The identity for remote nodes; nil: plain TCP (`--cluster-insecure`, and tests
    /// of the plaintext store).
    var tls: ClusterTLSSlot?
  }

  private let state = Mutex<State>(State())

  public init() {}

  /// From now on remote nodes are reached over TLS with `slot`'s identity (nil: plain).
  public func useTLS(_ slot: ClusterTLSSlot?) {
    state.withLock { $0.tls = slot }
  }

  /// The node advertised at `address` runs in this process at `socket` ("@...").
  public func registerLocal(address: String, socket: String) {
    state.withLock { $0.local[address] = socket }
  }

  public func unregisterLocal(address: String) {
    state.withLock { _ = $0.local.removeValue(forKey: address) }
  }

  /// A connected, blocking, close-on-exec stream socket to the node at `address`.
  public func connect(to address: String, timeoutMs: Int) throws(DqliteError) -> Int32 {
    let (local, tls) = state.withLock { ($0.local[address], $0.tls) }
    if let local { return try AbstractSocket.connect(local) }
    let tcp = try DqliteSocket.tcpDescriptor(to: address, timeoutMs: timeoutMs)
    guard let tls else { return tcp }
    return try Self.secure(tcp, address: address, context: tls.context, timeoutMs: timeoutMs)
  }

  /// Runs the client handshake on `tcp` (bounded by `timeoutMs`), then hands back a
  /// socket-pair end pumped through it. Closes `tcp` on failure.
  static func secure(
    _ tcp: Int32, address: String, context: ClusterTLSContext, timeoutMs: Int
  ) throws(DqliteError) -> Int32 {
    ERR_clear_error()
    guard let ssl = SSL_new(context.client) else {
      Glibc.close(tcp)
      throw ClusterTLSContext.error("SSL_new")
    }
    var timeout = timeval(tv_sec: timeoutMs / 1000, tv_usec: (timeoutMs % 1000) * 1000)
    _ = setsockopt(tcp, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    _ = setsockopt(tcp, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    guard SSL_set_fd(ssl, tcp) == 1, SSL_connect(ssl) == 1 else {
      let error = ClusterTLSContext.error("handshake with \(address)")
      SSL_free(ssl)
      Glibc.close(tcp)
      throw error
    }
    var pair: [Int32] = [-1, -1]
    guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0
    else {
      let reason = String(cString: strerror(errno))
      SSL_free(ssl)
      Glibc.close(tcp)
      throw .io("socketpair: \(reason)")
    }
    TLSPump.start(ssl: ssl, tls: tcp, plain: pair[1], name: "cluster-tls-out")
    return pair[0]
  }
}
