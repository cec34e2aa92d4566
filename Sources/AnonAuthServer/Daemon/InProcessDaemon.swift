import AnonAuthNet
import AnonAuthService
import AnonAuthStore
import AnonAuthWire

/// The daemon's serving stack in this process, with no socket: the store, the signing
/// pool, the services and their admission, and the router, wired by `ServingStack.make`
/// as `anonauthd --dev` wires them; calls reach the router through `InProcessTransport`
/// (`ConnectionCalls`, the path every transport takes after its framing). No listener,
/// ops port, worker or signal handler is started.
///
/// For `anonauth bench admission-calls`: it fills the admission tables with a million
/// addresses directly (`admission`), which a daemon would need a million admitted calls
/// (and as many sign-up quota rows) to reach, then times real calls through the router.
public struct InProcessDaemon: Sendable {
  /// The services' admission: the tables every call's expensive work is admitted in.
  public let admission: Admission
  /// What `--dev` wrote to `client.json` for this data dir: `project_id`, `api_key`,
  /// `admin_key`.
  public let keys: [String: String]
  private let store: Store
  private let pool: CPUPool
  private let outbound: HTTPSClient
  private let loop: EventLoop
  private let transport: InProcessTransport

  /// Starts the stack on a new data dir, with the daemon's defaults (`--dev`) and `flags`
  /// (more of `anonauthd`'s own, as on its command line).
  public static func start(dataDir: String, flags: [String] = []) async throws -> InProcessDaemon {
    let (config, _) = try DaemonConfig.resolve(
      arguments: ["--dev", "--data-dir", dataDir, "--listen", "127.0.0.1:0", "--ops-listen", "127.0.0.1:0"]
        + flags,
      environment: [:])
    let directory = DataDirectory(path: config.dataDir)
    _ = try directory.prepare()
    let secrets = try DaemonSecrets.load(config, dataDir: directory)
    // Every call's log line is still made; it goes nowhere.
    let logger = Logger(minimum: config.logLevel, sink: { _ in })
    let store = try Daemon.openStore(config.storeOptions(path: directory.path + "/anonauth.db"))
    let pool = CPUPool()
    let outbound = try HTTPSClient(caFile: config.outboundCAFile)
    let stack = try await ServingStack.make(
      config: config, logger: logger, dataDir: directory, secrets: secrets,
      ipPolicy: EndUserIPPolicy(trustedProxies: []),
      clusterNode: nil, store: store, pool: pool, outbound: outbound)
    let loop = try EventLoop(name: "anonauth-in-process")
    loop.start()
    return InProcessDaemon(
      admission: stack.admission, keys: stack.newDevKeys, store: store, pool: pool, outbound: outbound,
      loop: loop, transport: InProcessTransport(core: stack.server.core, loop: loop))
  }

  /// One call, as a connection from 127.0.0.1 hands it to the core (the server's
  /// default deadline): the reply's payload or the error answered.
  public func call(_ method: String, payload: [UInt8], metadata: [String: String]) async -> Result<
    [UInt8], RPCError
  > {
    await transport.call(method, payload: payload, metadata: metadata, timeoutMs: 0).result
  }

  /// Stops the loop, the pools and the store (calls must have returned).
  public func stop() async {
    loop.stopAndWait()
    pool.shutdown()
    outbound.shutdown()
    await store.close()
  }
}
