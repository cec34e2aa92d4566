import AnonAuthNet
import AnonAuthService
import AnonAuthStore
import Foundation

/// What the daemon serves, wired once the store is open: the project directory, the
/// signing keys, the services' environment, the workers, the router and its transports
/// (the RPC server and the ops server, made here, started as services by `Daemon.run`).
/// Nothing here is long-lived on its own: the parts that are run as services.
struct ServingStack: Sendable {
  let state: ServingState
  let directory: ProjectDirectory
  let minter: TokenMinter
  let cleanup: CleanupWorker
  let mailWorker: MailWorker?
  let server: RPCServer
  let ops: OpsServer
  /// The services' admission (`ServiceEnvironment.admission`), for the in-process
  /// daemon's bench, which fills its tables.
  let admission: Admission
  /// Where email links lead (the emulator listener's address is set once it is bound).
  let actionBase: ActionURLBase
  /// The keys `--dev` made in this start, for `client.json` (empty otherwise).
  let newDevKeys: [String: String]

  /// One list of steps in start order: split, it would hand a dozen values from one piece
  /// to the next.
  static func make(
    config: DaemonConfig, logger: Logger, dataDir: DataDirectory, secrets: DaemonSecrets,
    ipPolicy: EndUserIPPolicy, clusterNode: ClusterNode?, store: Store, pool: CPUPool, outbound: HTTPSClient
  ) async throws -> ServingStack {
    let masterKey = secrets.masterKey
    let state = ServingState()
    let metrics = ServerMetrics()
    let serviceMetrics = ServiceMetrics()
    let clock = SystemClock()
    let directory = try await ProjectDirectory(store: store, clock: clock)
    let minter = TokenMinter(
      store: store, clock: clock, masterKey: masterKey.bytes, issuerPrefix: config.issuerPrefix, pool: pool)
    do {
      try await minter.start()
    } catch {
      throw ConfigError("signing keys: \(error) (is --master-key-file the key this store was made with?)")
    }
    serviceMetrics.accounts.store(
      try await store.read { try AccountsRepository.count($0) }, ordering: .relaxed)
    var environment = ServiceEnvironment(
      store: store, directory: directory, minter: minter, clock: clock, ipPolicy: ipPolicy,
      metrics: serviceMetrics, logger: logger, masterKey: masterKey.bytes,
      outbound: OutboundHTTPSAdapter(client: outbound), admissionLimits: config.admission)
    environment.adminRequiresClientCertificate = config.adminRequiresClientCertificate
    environment.uidOrder = config.uidOrder
    // Email actions: where their mails go, and where their links lead (known once the
    // listeners are bound).
    let actionBase = ActionURLBase(configured: config.mail.actionURL)
    environment.email.actionURL = { [minter] in actionBase.url(publicURL: minter.publicURL) }
    environment.email.defaultSender = config.mail.from
    // On the replicated store only the leader sends, as only it runs scheduled clean-ups.
    let monitor = clusterNode?.monitor
    let mailWorker = try MailSetup.worker(
      config: config, dataDir: dataDir.path, store: store, clock: clock, logger: logger,
      metrics: serviceMetrics, masterKey: masterKey.bytes, sendsNow: { monitor?.isLeader ?? true })
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
    let ops = try OpsServer(
      routes: OpsRoutes.make(
        state: state, metrics: metrics, serviceMetrics: serviceMetrics, store: store, minter: minter,
        leaderReachable: { monitor?.hasLeader ?? true }),
      logger: logger)
    return ServingStack(
      state: state, directory: directory, minter: minter, cleanup: cleanup, mailWorker: mailWorker,
      server: server, ops: ops, admission: environment.admission, actionBase: actionBase,
      newDevKeys: newDevKeys)
  }

  /// The RPC port is bound: in --dev without a public URL the issuer is named by its
  /// address, and email links may lead to the emulator listener.
  func listening(on rpc: SocketAddress, config: DaemonConfig) {
    if config.publicURLFromListenAddress, config.listen.port == 0 {
      minter.setPublicURL(IssuerURL.dev(rpc: rpc))
    }
    actionBase.setEmulator(server.emulatorAddress.map { "http://\($0.description)/emulator/action" })
  }
}
