import AnonAuthNet
import AnonAuthService
import AnonAuthStore

/// The daemon's parts as services, one factory each; `Daemon.run` declares their order.
/// A part that cannot start throws the `ConfigError` naming its setting (exit 2).
enum DaemonServices {
  /// The replicated store's node with `--cluster` (nil otherwise), seeded from a
  /// single-file store left in the data dir; at the stop it hands leadership over.
  static func clusterNode(_ config: DaemonConfig, dataDir: String, masterKey: [UInt8], logger: Logger)
    -> PartService<ClusterNode?>
  {
    PartService("cluster node") { () throws -> ClusterNode? in
      guard let cluster = config.cluster else { return nil }
      let node = try ClusterNode.start(cluster, dataDir: dataDir, masterKey: masterKey, logger: logger)
      try node.seedFromSingleFile(dataDir + "/anonauth.db", logger: logger)
      return node
    } stop: {
      $0?.stop(logger: logger)
    }
  }

  /// The store, on the node when there is one: its writer, checkpointer and readers, which
  /// `close` stops in their own order (readers, checkpointer, then the writer, whose
  /// connection folds the WAL into the file).
  static func store(_ config: DaemonConfig, dataDir: String, node: ClusterNode?) -> PartService<Store> {
    var options = config.storeOptions(path: dataDir + "/anonauth.db")
    if let node, let cluster = config.cluster {
      options.path = node.directory + "/anonauth.db"
      options.cluster = ClusterStoreOptions(seeds: cluster.seeds)
    }
    let opening = options
    return PartService("store") {
      try Daemon.openStore(opening)
    } stop: {
      await $0.close()
    }
  }

  /// The CPU pool that signs tokens.
  static func signingPool() -> PartService<CPUPool> {
    PartService("signing pool") {
      CPUPool()
    } stop: {
      $0.shutdown()
    }
  }

  /// The HTTPS client of the identity providers' calls (`--outbound-ca-file`).
  static func outboundHTTPS(_ config: DaemonConfig) -> PartService<HTTPSClient> {
    PartService("outbound HTTPS") { () throws(ConfigError) -> HTTPSClient in
      do {
        return try HTTPSClient(caFile: config.outboundCAFile)
      } catch {
        throw ConfigError("--outbound-ca-file: \(error)")
      }
    } stop: {
      $0.shutdown()
    }
  }

  /// The background loops: the mail worker (when mail is on), the clean-up worker and, on
  /// the replicated store, the sync of what other nodes change.
  static func workers(_ stack: ServingStack, node: ClusterNode?, logger: Logger) -> [WorkerService] {
    var workers: [WorkerService] = []
    if let mail = stack.mailWorker {
      workers.append(WorkerService("mail worker") { await mail.run() })
    }
    let cleanup = stack.cleanup
    workers.append(WorkerService("clean-up worker") { await cleanup.run() })
    if let node {
      let sync = ClusterSync(directory: stack.directory, minter: stack.minter, logger: logger)
      workers.append(WorkerService("cluster sync") { await sync.run(on: node) })
    }
    return workers
  }

  /// The ops port (`--ops-listen`): health, readiness, metrics.
  static func ops(_ ops: OpsServer, _ config: DaemonConfig) -> PartService<SocketAddress> {
    PartService("ops server") { () throws(ConfigError) -> SocketAddress in
      do {
        return try ops.start(on: config.opsListen)
      } catch {
        throw ConfigError("--ops-listen \(config.opsListen): \(error)")
      }
    } stop: { _ in
      ops.stop()
    }
  }

  /// The RPC port and the emulator listener with their event loops; the stop is the
  /// graceful shutdown of docs/protocol.md §2, cut short at the drain deadline.
  static func rpc(_ server: RPCServer, _ config: DaemonConfig) -> PartService<SocketAddress> {
    PartService("rpc server") { () throws(ConfigError) -> SocketAddress in
      do {
        return try server.start()
      } catch let error as RPCServer.EmulatorListenError {
        throw ConfigError(
          "--firebase-emulator-listen \(config.rpc.emulatorListen?.description ?? ""): \(error)")
      } catch {
        throw ConfigError("--listen \(config.listen): \(error)")
      }
    } stop: { _ in
      await server.shutdown()
    }
  }

  /// SIGHUP reloads the RPC port's certificate and the cluster's; ignored once stopping.
  static func tlsReload(_ signals: SignalWaiter, reloader: TLSReloader, node: ClusterNode?, logger: Logger)
    -> PartService<Void>
  {
    PartService("TLS reload") {
      signals.onHangUp {
        reloader.reload()
        node?.reloadTLS(logger: logger)
      }
    } stop: {
      signals.onHangUp(nil)
    }
  }

  /// Last to start, first to stop: the `ready` line and readiness on; at the stop
  /// readiness off (`/readyz` 503, health `NOT_SERVING`), the drain's first step.
  static func readiness(_ announcement: Announcement, rpc: SocketAddress, ops: SocketAddress)
    -> PartService<Void>
  {
    PartService("readiness") {
      try announcement.announce(rpc: rpc, ops: ops)
    } stop: {
      announcement.stack.state.set(ServingState.Phase.draining)
    }
  }
}
