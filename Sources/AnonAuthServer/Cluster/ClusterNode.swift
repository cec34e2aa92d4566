import AnonAuthDqlite
import AnonAuthService
import AnonAuthStore
import Foundation
import Glibc

/// This daemon's dqlite node, its TLS gateway and its watcher, from start to stop.
public final class ClusterNode: Sendable {
  let config: ClusterConfig
  let directory: String
  let monitor: ClusterMonitor
  /// The node's directory held Raft state before this start (false: a new member, or
  /// node 1 bootstrapping a new cluster).
  let restarted: Bool
  private let node: DqliteNode
  /// The cluster port with TLS on (nil: `--cluster-insecure`, the node listens there itself).
  private let gateway: ClusterGateway?
  /// The identity the gateway and the dialer use, replaced on SIGHUP.
  let tlsSlot: ClusterTLSSlot?

  private init(
    config: ClusterConfig, directory: String, restarted: Bool, node: DqliteNode, monitor: ClusterMonitor,
    gateway: ClusterGateway?, tlsSlot: ClusterTLSSlot?
  ) {
    self.config = config
    self.directory = directory
    self.restarted = restarted
    self.node = node
    self.monitor = monitor
    self.gateway = gateway
    self.tlsSlot = tlsSlot
  }

  /// Starts the node in `<data-dir>/cluster`, brings it into the cluster and starts
  /// watching the leader. Blocks until this node is a member.
  static func start(_ config: ClusterConfig, dataDir: String, masterKey: [UInt8], logger: Logger) throws
    -> ClusterNode
  {
    let directory = dataDir + "/cluster"
    do {
      try FileManager.default.createDirectory(
        atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    } catch {
      throw ConfigError("cluster: cannot make \(directory): \(error.localizedDescription)")
    }
    // Raft and store connections leave from the address this node listens on.
    OutgoingSource.use(listenAddress: config.listen)
    // The identity first: every connection to another node, the check for a second
    // bootstrap's included, goes out through it.
    var slot: ClusterTLSSlot?
    if config.tls == .insecure {
      logger.warning(
        "cluster: --cluster-insecure: the cluster port has no TLS and no authentication; whoever reaches "
          + "it reads and writes the whole store", ["listen": .string(config.listen)])
    } else {
      slot = ClusterTLSSlot(
        try ClusterTLS.load(config.tls, id: config.id, dataDir: dataDir, masterKey: masterKey))
    }
    ClusterDialer.shared.useTLS(slot)
    try ClusterMembership.refuseSecondBootstrap(config, directory: directory)
    let restarted = ClusterMembership.hasRaftState(directory)
    let node: DqliteNode
    var gateway: ClusterGateway?
    do {
      try ListenCheck.check(config.listen)
      if let slot {
        // The node listens where only this process reaches it; the gateway takes the port.
        let refusals = LogBudget()
        let socket = "@anonauth-dqlite-\(getpid())-\(config.id)-\(UInt32.random(in: 0...UInt32.max))"
        node = try DqliteNode(
          id: config.id, address: config.advertise, bindAddress: socket, directory: directory,
          networkLatencyMs: config.networkLatencyMs)
        let started = try ClusterGateway(
          listen: config.listen, nodeSocket: socket, tls: slot,
          onRefused: { reason in
            // Anyone who reaches the port can cause these: a line a second, with a count.
            guard let suppressed = refusals.take() else { return }
            var fields: [String: LogValue] = ["error": .string(reason)]
            if suppressed > 0 { fields["refused_unlogged"] = .int(Int64(suppressed)) }
            logger.warning("cluster: connection refused", fields)
          })
        started.start()
        gateway = started
      } else {
        node = try DqliteNode(
          id: config.id, address: config.advertise, bindAddress: config.listen, directory: directory,
          networkLatencyMs: config.networkLatencyMs)
      }
      try node.start()
    } catch {
      gateway?.stop()
      throw ConfigError("cluster: node \(config.id) on \(config.listen): \(error)")
    }
    logger.info(
      "cluster: node started",
      [
        "id": .int(Int64(config.id)), "listen": .string(config.listen),
        "advertise": .string(config.advertise),
        "join": .string(config.join.joined(separator: ",")), "restarted": .bool(restarted),
        "tls": .string(slot == nil ? "off" : "mutual"),
        "cluster_sha256": .string(slot?.context.certificateSHA256 ?? ""),
      ])
    do {
      try ClusterMembership.join(config, restarted: restarted, logger: logger)
    } catch {
      node.stop()
      gateway?.stop()
      throw error
    }
    let monitor = ClusterMonitor(config: config)
    monitor.start()
    return ClusterNode(
      config: config, directory: directory, restarted: restarted, node: node, monitor: monitor,
      gateway: gateway, tlsSlot: slot)
  }

  /// `--cluster-recover`: forces the Raft membership of this node's data to `members` (all
  /// voters), for a cluster that lost its majority. Every node must be stopped; this node
  /// should hold the most recent log of the survivors, and its `cluster` directory is then
  /// copied to the others (docs/replicated-store.md, Runbook).
  static func recover(
    _ config: ClusterConfig, members: [(id: UInt64, address: String)], dataDir: String, logger: Logger
  ) throws(ConfigError) {
    let directory = dataDir + "/cluster"
    guard ClusterMembership.hasRaftState(directory) else {
      throw ConfigError("--cluster-recover: \(directory) holds no cluster data to recover")
    }
    do {
      try DqliteNode.recover(
        id: config.id, address: config.advertise, directory: directory,
        members: members.map { DqliteNodeInfo(id: $0.id, address: $0.address, role: .voter) })
    } catch {
      throw ConfigError("--cluster-recover: \(error)")
    }
    logger.info(
      "cluster: membership recovered; copy this node's cluster directory to the other members, then start them all",
      [
        "directory": .string(directory),
        "members": .string(members.map { "\($0.id)=\($0.address)" }.joined(separator: ",")),
      ])
  }

  /// Moves a single-file store in the data dir onto the cluster when node 1 bootstraps
  /// next to it, then renames the file so that it is never copied twice; refuses to go on
  /// when an earlier copy did not finish; says so when the file is left unused.
  func seedFromSingleFile(_ path: String, logger: Logger) throws {
    guard FileManager.default.fileExists(atPath: path) else { return }
    guard config.id == 1 else {
      logger.warning(
        "cluster: \(path) is not used: the store is the cluster's (node 1 seeds a new cluster from its own file)"
      )
      return
    }
    guard !restarted else {
      throw ConfigError(
        "cluster: \(path) is still here beside a cluster that was started before: an earlier copy onto the "
          + "cluster did not finish. Stop, delete \(directory), and start again to copy it afresh; or move the "
          + "file away to keep the cluster as it is")
    }
    logger.info("cluster: copying the single-file store onto the new cluster", ["file": .string(path)])
    var lastLogged = 0
    let rows: Int
    do {
      rows = try ClusterSeed.copy(
        from: path, to: ClusterStoreOptions(seeds: config.seeds), migrations: AnonAuthSchema.migrations
      ) { table, copied in
        if copied - lastLogged >= 100_000 || copied < lastLogged {
          logger.info("cluster: copying", ["table": .string(table), "rows": .int(Int64(copied))])
          lastLogged = copied
        }
      }
    } catch {
      throw ConfigError(
        "cluster: copying \(path) onto the cluster failed (\(error)); the new cluster holds part of it: "
          + "stop, delete \(directory) and start again")
    }
    let kept = path + ".copied-to-cluster"
    do {
      try FileManager.default.moveItem(atPath: path, toPath: kept)
      try? FileManager.default.removeItem(atPath: path + "-shm")
    } catch {
      throw ConfigError(
        "cluster: copied, but cannot rename \(path) to \(kept): \(error.localizedDescription)")
    }
    logger.info("cluster: single-file store copied", ["rows": .int(Int64(rows)), "kept_as": .string(kept)])
  }

  /// Hands leadership to another voter if this node leads (so that the others need not
  /// wait for an election timeout), then stops the node. Its own node is asked, not the
  /// monitor's snapshot: that is up to half a second old, and a voter that joined since
  /// would be missed (the others then waited for an election).
  func stop(logger: Logger) {
    monitor.stop()
    do {
      let connection = try DqliteConnection(address: config.advertise, timeoutMs: DqliteTimeouts.nodeMs)
      defer { connection.close() }
      if try connection.leader()?.id == config.id,
        let heir = try connection.cluster().first(where: { $0.role == .voter && $0.id != config.id })
      {
        try connection.transfer(to: heir.id)
        logger.info("cluster: leadership handed over", ["to": .int(Int64(heir.id))])
      }
    } catch {
      logger.warning("cluster: leadership hand-over failed", ["error": .string("\(error)")])
    }
    node.stop()
    gateway?.stop()
  }

  /// SIGHUP: the cluster certificate files read again (`--dev` and `--cluster-insecure`
  /// have none to read).
  func reloadTLS(logger: Logger) {
    guard case .files(let files) = config.tls, let tlsSlot else { return }
    ClusterTLS.reload(files, into: tlsSlot, logger: logger)
  }
}
