import AnonAuthNet
import AnonAuthService
import AnonAuthStore
import AnonAuthWire
import Dispatch
import Foundation
import Glibc

/// The daemon's life: configure, start, announce `ready`, serve until SIGTERM/SIGINT,
/// drain, exit 0. `main` returns the process exit code.
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
    } catch let error as ConfigError {
      FileHandle.standardError.write(Data("anonauthd: \(error.description)\n".utf8))
      return 2
    } catch {
      FileHandle.standardError.write(Data("anonauthd: \(error)\n".utf8))
      return 1
    }
  }

  static func run(_ config: DaemonConfig) async throws -> Int32 {
    let coreDumpsOff = CoreDumps.disable()
    let heapTuned = HeapTuning.apply()
    signal(SIGPIPE, SIG_IGN)
    // From here a SIGHUP cannot kill a starting daemon: it is read, and ignored until the
    // reloader takes it.
    let signals = try SignalWaiter()
    // Every file the daemon makes (store, WAL, keys, client.json, backups) is its own
    // alone, whatever umask it was started with.
    umask(0o077)
    let logger = Logger(minimum: config.logLevel)
    if !coreDumpsOff {
      logger.warning("the kernel refused to turn core dumps off: a core file would hold the master key")
    }
    if !heapTuned {
      logger.warning("glibc refused the heap thresholds: large frames will fault fresh pages")
    }
    let dataDir = DataDirectory(path: config.dataDir)
    // Outside --dev the secrets are read before the data dir is touched: a bad file
    // changes nothing.
    let secrets: DaemonSecrets
    let permissions: DataDirectory.PermissionChanges
    if config.dev {
      permissions = try dataDir.prepare()
      secrets = try DaemonSecrets.load(config, dataDir: dataDir)
    } else {
      secrets = try DaemonSecrets.load(config, dataDir: dataDir)
      permissions = try dataDir.prepare()
    }
    for change in permissions.tightened {
      logger.warning(
        "data dir permissions tightened: it was open to group or others", ["change": .string(change)])
    }
    for item in permissions.leftOpen {
      logger.warning(
        "data dir folder open to group or others, owned by another user", ["item": .string(item)])
    }
    if let cluster = config.cluster, let members = config.clusterRecover {
      try ClusterNode.recover(cluster, members: members, dataDir: dataDir.path, logger: logger)
      return 0
    }
    let masterKey = secrets.masterKey
    let ipPolicy: EndUserIPPolicy
    switch EndUserIPPolicy.parse(config.trustedProxies) {
    case .success(let policy): ipPolicy = policy
    case .failure(let error): throw ConfigError("--trusted-proxies: \"\(error.entry)\" is not a CIDR")
    }

    let state = ServingState()
    let metrics = ServerMetrics()
    let serviceMetrics = ServiceMetrics()
    let clock = SystemClock()
    var storeOptions = config.storeOptions(path: dataDir.path + "/anonauth.db")
    var clusterNode: ClusterNode?
    if let cluster = config.cluster {
      let node = try ClusterNode.start(
        cluster, dataDir: dataDir.path, masterKey: secrets.masterKey.bytes, logger: logger)
      try node.seedFromSingleFile(dataDir.path + "/anonauth.db", logger: logger)
      storeOptions.path = node.directory + "/anonauth.db"
      storeOptions.cluster = ClusterStoreOptions(seeds: cluster.seeds)
      clusterNode = node
    }
    let store: Store
    do {
      store = try Store.open(options: storeOptions, migrations: AnonAuthSchema.migrations)
    } catch {
      var message = "store \(storeOptions.cluster == nil ? storeOptions.path : "on the cluster"): \(error)"
      if storeOptions.cluster == nil, let free = Store.freeBytes(forStoreAt: storeOptions.path),
        free < Store.probeHeadroomBytes
      {
        message += " (the data dir's file system has \(free) bytes free; the store needs room for its WAL)"
      }
      throw ConfigError(message)
    }
    let directory = try await ProjectDirectory(store: store, clock: clock)
    let pool = CPUPool()
    let minter = TokenMinter(
      store: store, clock: clock, masterKey: masterKey.bytes, issuerPrefix: config.issuerPrefix, pool: pool)
    do {
      try await minter.start()
    } catch {
      throw ConfigError("signing keys: \(error) (is --master-key-file the key this store was made with?)")
    }
    serviceMetrics.accounts.store(
      try await store.read { try AccountsRepository.count($0) }, ordering: .relaxed)
    let outbound: HTTPSClient
    do {
      outbound = try HTTPSClient(caFile: config.outboundCAFile)
    } catch {
      throw ConfigError("--outbound-ca-file: \(error.description)")
    }
    var environment = ServiceEnvironment(
      store: store, directory: directory, minter: minter, clock: clock, ipPolicy: ipPolicy,
      metrics: serviceMetrics, logger: logger, masterKey: masterKey.bytes,
      outbound: OutboundHTTPSAdapter(client: outbound), admissionLimits: config.admission)
    environment.adminRequiresClientCertificate = config.adminRequiresClientCertificate
    // Email actions: where their mails go, and where their links lead (known once the
    // listeners are bound).
    let actionBase = ActionURLBase(configured: config.mail.actionURL)
    environment.email.actionURL = { [minter] in actionBase.url(publicURL: minter.publicURL) }
    environment.email.defaultSender = config.mail.from
    // On the replicated store only the leader sends, as only it runs scheduled clean-ups.
    let mailMonitor = clusterNode?.monitor
    let mailWorker = try MailSetup.worker(
      config: config, dataDir: dataDir.path, store: store, clock: clock, logger: logger,
      metrics: serviceMetrics, masterKey: masterKey.bytes, sendsNow: { mailMonitor?.isLeader ?? true })
    if let mailWorker {
      environment.email.deliveryConfigured = true
      environment.email.mailQueued = { mailWorker.mailQueued() }
    }
    if config.dev { environment.email.devMailbox = DevMailbox() }
    if let adminKey = secrets.adminKey,
      try await directory.replaceAdminKey(label: AdminKeyFile.label, rawKey: adminKey)
    {
      logger.info("admin key from --admin-key-file registered")
    }
    var newDevKeys: [String: String] = [:]
    if config.dev {
      newDevKeys = try await DevBootstrap.ensure(
        directory: directory, existing: ClientFile.read(at: dataDir.clientJSON))
    }

    // NOT_SERVING while the store refuses writes (disk full); each check may probe it.
    let health = HealthService(state: state) { [store] in
      if !store.isWritable { Task { await store.probeWritability() } }
      return store.isWritable
    }
    var router = Router()
    let monitor = clusterNode?.monitor
    let cleanup = config.cleanupWorker(
      environment: environment, runsScheduledPasses: { monitor?.isLeader ?? true })
    ServiceRoutes.register(
      in: &router, environment: environment, health: health, cleanup: cleanup,
      backupDirectory: dataDir.path + "/backups", cluster: clusterNode)
    if config.testHooks { TestHooks.register(in: &router) }

    // Firebase's JSON API on the same router: HTTP is one more transport onto the services.
    let firebaseAPI = FirebaseAPI(
      router: router, devMailbox: environment.email.devMailbox,
      corsOrigins: { [directory] key in (try? directory.project(apiKey: key))?.corsOrigins ?? [] },
      recordCall: FirebaseCallLog(logger: logger, metrics: metrics, router: router).record)
    // On the emulator listener only, the Admin SDK's `Bearer owner` stands for the admin key
    // (a key this process makes for itself, only when that listener is on).
    let emulatorOwner = AdminEmulatorOwner(
      api: firebaseAPI,
      processAdminKey: config.rpc.emulatorListen == nil ? nil : try directory.makeProcessAdminKey(),
      isAdminKey: { directory.isAdminKey($0) })
    // The issuer's discovery document and keys, on the RPC port, before the API.
    let httpApplication = IssuerDocuments(
      api: emulatorOwner, minter: minter, projectExists: { directory.project($0) != nil })
    // The issuer's address is known now unless --dev names it by a port still to be picked.
    if let publicURL = config.publicURL {
      minter.setPublicURL(publicURL)
    } else if config.publicURLFromListenAddress, config.listen.port != 0 {
      minter.setPublicURL(IssuerURL.dev(rpc: config.listen))
    }
    // The gRPC methods the transport serves itself, by path: grpc.health.v1 (the readiness
    // `health` reports) and server reflection over the descriptors embedded at build time.
    let grpcMethods = GRPCLocalMethods(GRPCStandardServices.methods(health: health))
    let server = RPCServer(
      config: config.rpc, tls: secrets.tls, router: router, logger: logger, metrics: metrics,
      httpApplication: httpApplication, grpcMethods: grpcMethods)
    let rpcAddress: SocketAddress
    do {
      rpcAddress = try server.start()
    } catch let error as RPCServer.EmulatorListenError {
      throw ConfigError(
        "--firebase-emulator-listen \(config.rpc.emulatorListen?.description ?? ""): \(error)")
    } catch {
      throw ConfigError("--listen \(config.listen): \(error)")
    }
    if config.publicURLFromListenAddress, config.listen.port == 0 {
      minter.setPublicURL(IssuerURL.dev(rpc: rpcAddress))
    }
    actionBase.setEmulator(server.emulatorAddress.map { "http://\($0.description)/emulator/action" })
    let ops = try OpsServer(
      routes: OpsRoutes.make(
        state: state, metrics: metrics, serviceMetrics: serviceMetrics, store: store, minter: minter,
        leaderReachable: { monitor?.hasLeader ?? true }),
      logger: logger)
    let opsAddress: SocketAddress
    do {
      opsAddress = try ops.start(on: config.opsListen)
    } catch {
      throw ConfigError("--ops-listen \(config.opsListen): \(error)")
    }

    // Listening before the ready line, so that a SIGHUP right after it is not lost.
    let reloader = TLSReloader(
      certificateFile: secrets.certificateFile, keyFile: secrets.keyFile, clientCAFile: config.clientCAFile,
      server: server, logger: logger)
    let reloadedNode = clusterNode
    signals.onHangUp {
      reloader.reload()
      reloadedNode?.reloadTLS(logger: logger)
    }
    if config.dev {
      let caFile = URL(fileURLWithPath: secrets.certificateFile).standardizedFileURL.path
      try ClientFile.update(
        at: dataDir.clientJSON, rpc: rpcAddress.description, ops: opsAddress.description,
        caFile: caFile, extra: newDevKeys)
    }
    state.set(.serving)
    cleanup.start()
    mailWorker?.start()
    let sync = clusterNode.map { ClusterSync(directory: directory, minter: minter, logger: logger).start($0) }
    let ready: [String: LogValue] = [
      "event": "ready", "rpc": .string(rpcAddress.description), "ops": .string(opsAddress.description),
      "pid": .int(Int64(getpid())), "data_dir": .string(dataDir.path), "dev": .bool(config.dev),
    ].merging(server.emulatorAddress.map { ["firebase_emulator": .string($0.description)] } ?? [:]) { $1 }
      .merging(minter.publicURL.map { ["public_url": .string($0)] } ?? [:]) { $1 }
    FileHandle.standardOutput.write(Data((LogValue.object(ready).json + "\n").utf8))
    if !newDevKeys.isEmpty {
      // Where the new keys are, never the keys: stdout is often kept as logs (container
      // runtimes), and the raw admin key must exist nowhere but client.json (0600).
      let credentials: [String: LogValue] = [
        "event": "dev_credentials", "client_json": .string(dataDir.clientJSON),
        "written": .string(newDevKeys.keys.sorted().joined(separator: ",")),
      ]
      FileHandle.standardOutput.write(Data((LogValue.object(credentials).json + "\n").utf8))
    }
    Task.detached { [store, logger] in
      let started = ContinuousClock.now
      do {
        try await store.verifyIntegrity()
        let elapsed = ContinuousClock.now - started
        logger.info("store integrity check passed", ["seconds": .string("\(elapsed.components.seconds)")])
      } catch {
        logger.error(
          "store integrity check failed: writes are refused and /readyz is 503; restore a backup",
          ["error": .string("\(error)")])
      }
    }
    logger.info(
      "serving",
      [
        "rpc": .string(rpcAddress.description), "ops": .string(opsAddress.description),
        "tls_sha256": .string(secrets.tls.certificateSHA256 ?? ""),
      ].merging(server.emulatorAddress.map { ["firebase_emulator": .string($0.description)] } ?? [:]) { $1 })

    let signal = await signals.next()
    signals.onHangUp(nil)
    logger.info("draining", ["signal": .int(Int64(signal))])
    state.set(.draining)
    cleanup.stop()
    mailWorker?.stop()
    sync?.cancel()
    await server.shutdown()
    ops.stop()
    await store.close()
    clusterNode?.stop(logger: logger)
    pool.shutdown()
    outbound.shutdown()
    logger.info("stopped")
    return 0
  }
}
