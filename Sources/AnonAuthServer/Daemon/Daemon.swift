import AnonAuthNet
import AnonAuthService
import AnonAuthStore
import AnonAuthWire
import Dispatch
import Foundation
import Glibc

/// The daemon's life: configure, start, announce `ready`, serve until SIGTERM/SIGINT,
/// drain, exit 0. `main` returns the process exit code: 0 after a graceful stop, 2 when a
/// setting or a part cannot start as configured (`ConfigError`), 1 on any other failure,
/// a service failing while the daemon serves included (docs/operations.md).
public enum Daemon {
  public static func main(arguments: [String], environment: [String: String]) async -> Int32 {
    let config: DaemonConfig
    do {
      let (resolved, action) = try DaemonConfig.resolve(arguments: arguments, environment: environment)
      switch action {
      case .help:
        print(DaemonConfig.helpText(), terminator: "")
        return 0
      case .printConfig:
        print(resolved.printableConfig(), terminator: "")
        return 0
      case .run:
        config = resolved
      }
    } catch {
      if arguments.contains("--help") || arguments.contains("-h") {
        print(DaemonConfig.helpText(), terminator: "")
        return 0
      }
      FileHandle.standardError.write(Data("anonauthd: \(error.description)\n".utf8))
      return 2
    }
    do {
      return try await run(config)
    } catch let failure as ServiceFailure where !failure.whileStarting {
      FileHandle.standardError.write(Data("anonauthd: \(failure)\n".utf8))
      return 1
    } catch let failure as ServiceFailure {
      // A part that could not start: its own error, as if thrown here.
      let error = failure.error
      FileHandle.standardError.write(
        Data("anonauthd: \((error as? ConfigError)?.description ?? "\(error)")\n".utf8))
      return error is ConfigError ? 2 : 1
    } catch let error as ConfigError {
      FileHandle.standardError.write(Data("anonauthd: \(error.description)\n".utf8))
      return 2
    } catch {
      FileHandle.standardError.write(Data("anonauthd: \(error)\n".utf8))
      return 1
    }
  }

  /// The order in which the daemon's parts start; they stop in reverse, within the drain
  /// deadline (`--shutdown-grace-ms`). docs/architecture.md ("Start and stop") explains it.
  static func run(_ config: DaemonConfig) async throws -> Int32 {
    let host = try DaemonHost.prepare(config)
    let logger = host.logger
    let dataDir = host.dataDir.path
    if let cluster = config.cluster, let members = config.clusterRecover {
      try ClusterNode.recover(cluster, members: members, dataDir: dataDir, logger: logger)
      return 0
    }
    let ipPolicy: EndUserIPPolicy
    switch EndUserIPPolicy.parse(config.trustedProxies) {
    case .success(let policy): ipPolicy = policy
    case .failure(let error): throw ConfigError("--trusted-proxies: \"\(error.entry)\" is not a CIDR")
    }
    let signals = host.signals
    let group = ServiceGroup(logger: logger, drainMilliseconds: Int(clamping: config.rpc.shutdownGraceMs))
    do {
      // Storage: the replicated store's node (none on a single file), then the store.
      let node = try await group.start(
        DaemonServices.clusterNode(
          config, dataDir: dataDir, masterKey: host.secrets.masterKey.bytes, logger: logger))
      let store = try await group.start(DaemonServices.store(config, dataDir: dataDir, node: node))
      // What the handlers share.
      let pool = try await group.start(DaemonServices.signingPool())
      let outbound = try await group.start(DaemonServices.outboundHTTPS(config))
      // Not a service: the directory, the signing keys, the router and the two servers.
      let stack = try await ServingStack.make(
        config: config, logger: logger, dataDir: host.dataDir, secrets: host.secrets, ipPolicy: ipPolicy,
        clusterNode: node, store: store, pool: pool, outbound: outbound)
      // The workers before the listeners: they stop after them, so a clean-up pass or a
      // mail under way never holds up the RPC port's drain.
      for worker in DaemonServices.workers(stack, node: node, logger: logger) {
        try await group.start(worker)
      }
      // The ops port before the RPC port: /readyz answers 503 through the whole drain.
      let ops = try await group.start(DaemonServices.ops(stack.ops, config))
      let rpc = try await group.start(DaemonServices.rpc(stack.server, config))
      stack.listening(on: rpc, config: config)
      // SIGHUP reloads TLS from before the ready line: one sent right after it is not lost.
      let reloader = TLSReloader(
        certificateFile: host.secrets.certificateFile, keyFile: host.secrets.keyFile,
        clientCAFile: config.clientCAFile, server: stack.server, logger: logger)
      try await group.start(DaemonServices.tlsReload(signals, reloader: reloader, node: node, logger: logger))
      let announcement = Announcement(
        config: config, dataDir: host.dataDir, logger: logger, certificateFile: host.secrets.certificateFile,
        tlsSHA256: host.secrets.tls.certificateSHA256 ?? "", stack: stack, store: store)
      try await group.start(DaemonServices.readiness(announcement, rpc: rpc, ops: ops))
    } catch {
      await group.stop()
      throw error
    }
    try await group.run {
      let signal = await signals.next()
      logger.info("draining", ["signal": .int(Int64(signal))])
    }
    logger.info("stopped")
    return 0
  }
}
