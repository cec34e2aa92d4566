/// Every thread name an `anonauthd` process may show in `top -H` or
/// `/proc/PID/task/*/comm`, in one place: `ThreadNameTests` holds a real daemon to it, and
/// the operations guide's thread table is this list. Linux keeps 15 bytes of a name, so
/// the daemon's own are `anonauth-` and a short word; the others are the main thread and
/// the threads of libdispatch, which Foundation and Swift concurrency run on.
enum DaemonThreadNames {
  struct Kind: Sendable {
    /// A regular expression that matches the whole name.
    let pattern: String
    /// Whether an idle single-node daemon always has at least one.
    let always: Bool
    /// What the threads do and who makes them.
    let role: String
  }

  static let kinds: [Kind] = [
    Kind(pattern: "anonauthd", always: true, role: "main thread: parked by the async main (dispatch_main)"),
    Kind(
      pattern: "anonauth-signal", always: true,
      role: "reads SIGTERM, SIGINT and SIGHUP from the handlers' pipe (SignalWaiter)"),
    Kind(
      pattern: "anonauth-io-[0-9]+", always: true,
      role: "RPC event loops, --io-threads: accept, TLS, frames (RPCServer)"),
    Kind(pattern: "anonauth-ops", always: true, role: "ops HTTP event loop: probes, /metrics (OpsServer)"),
    Kind(
      pattern: "anonauth-cpu-[0-9]+", always: true, role: "token signing pool, one per core (TokenMinter)"),
    Kind(
      pattern: "anonauth-pw-[0-9]+", always: true,
      role: "scrypt password pool, one fewer than the cores (ServiceEnvironment)"),
    Kind(pattern: "anonauth-writer", always: true, role: "the store's one group-committing writer (Writer)"),
    Kind(pattern: "anonauth-ckpt", always: true, role: "background WAL checkpoints (Checkpointer)"),
    Kind(
      pattern: "anonauth-out-[0-9]+", always: true,
      role: "blocking outbound HTTPS: JWKS, Firebase certificates (HTTPSClient's IOThreadPool)"),
    Kind(
      pattern: "anonauth-smtp-[0-9]+", always: false, role: "with --smtp-url: the SMTP client (SMTPClient)"),
    Kind(
      pattern: "anonauth-leader", always: false, role: "replicated store only: leader checks (ClusterMonitor)"
    ),
    // libdispatch names its workers after their root queue's label, keeping the last 15
    // bytes (com.apple.root.default-qos.overcommit and so on). They run Swift
    // concurrency's tasks (handlers, the clean-up worker), serial DispatchQueues (store
    // reads, backups) and dispatch's own event manager, and come and go
    // with the load: the runtime's pools, not threads the daemon makes.
    Kind(
      pattern: "[a-z.-]*(qos|qos\\.overcommit|qos\\.cooperative)", always: false,
      role: "libdispatch workers and manager: Swift concurrency, DispatchQueues"),
  ]

  /// The kind `name` belongs to, if any.
  static func kind(of name: String) -> Kind? {
    kinds.first { kind in
      guard let regex = try? Regex(kind.pattern) else { return false }
      return name.wholeMatch(of: regex) != nil
    }
  }
}
