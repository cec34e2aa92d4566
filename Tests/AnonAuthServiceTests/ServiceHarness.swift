import AnonAuthCrypto
import AnonAuthService
import AnonAuthServiceTestSupport
import AnonAuthStore
import AnonAuthTestSupport
import AnonAuthWire
import Foundation
import Synchronization

/// The service layer built on one store file, wired as the daemon wires it.
struct ServiceStack: Sendable {
  let store: Store
  let pool: CPUPool
  let directory: ProjectDirectory
  let minter: TokenMinter
  let env: ServiceEnvironment

  /// Opens the store and builds everything on it; the minter is not started yet.
  /// - Parameter admission: production's limits unless a test says otherwise by name.
  static func open(
    path: String, clock: ManualClock, masterKey: [UInt8], ipPolicy: EndUserIPPolicy,
    admission: AdmissionLimits = AdmissionLimits()
  ) async throws -> ServiceStack {
    // NORMAL: no fsync per commit; every test closes the store before reopening it.
    let store = try Store.open(
      options: StoreOptions(path: path, synchronous: .normal), migrations: AnonAuthSchema.migrations)
    let pool = CPUPool(threads: 2, name: "anonauth-test-cpu")
    let passwordPool = CPUPool(threads: 2, name: "anonauth-test-scrypt", maxQueued: 64)
    do {
      let directory = try await ProjectDirectory(store: store, clock: clock)
      let minter = TokenMinter(
        store: store, clock: clock, masterKey: masterKey, issuerPrefix: ServiceHarness.issuerPrefix,
        pool: pool)
      let env = ServiceEnvironment(
        store: store, directory: directory, minter: minter, clock: clock, ipPolicy: ipPolicy,
        metrics: ServiceMetrics(), logger: .silent, masterKey: masterKey, passwordPool: passwordPool,
        admissionLimits: admission)
      return ServiceStack(store: store, pool: pool, directory: directory, minter: minter, env: env)
    } catch {
      await store.close()
      pool.shutdown()
      passwordPool.shutdown()
      throw error
    }
  }

  func close() async {
    await store.close()
    pool.shutdown()
    env.passwordPool.shutdown()
  }
}

/// Every stack a test opened, so that all of them are closed when it ends.
final class OpenStacks: Sendable {
  private let stacks = Mutex<[ServiceStack]>([])

  func add(_ stack: ServiceStack) { stacks.withLock { $0.append(stack) } }

  func closeAll() async {
    let all = stacks.withLock { list in
      defer { list = [] }
      return list
    }
    for stack in all { await stack.close() }
  }
}

/// The service layer in-process: a real SQLite file in a temporary directory, a
/// `ManualClock`, a project with anonymous sign-in on and an API key, and an admin key.
final class ServiceHarness: Sendable {
  static let issuerPrefix = "https://securetoken.google.com/"
  static let projectID = "test-project"
  /// The socket peer of calls that do not name one (TEST-NET-3).
  static let defaultPeer = "203.0.113.10"

  let directory: TemporaryDirectory
  let clock: ManualClock
  let masterKey: [UInt8]
  let ipPolicy: EndUserIPPolicy
  /// Production's admission limits unless the test named others (`with(admission:)`).
  let admission: AdmissionLimits
  let stack: ServiceStack
  let apiKey: String
  let adminKey: String
  private let opened: OpenStacks

  var projectID: String { Self.projectID }
  var store: Store { stack.store }
  var minter: TokenMinter { stack.minter }
  var accounts: AccountService { AccountService(environment: stack.env) }
  var tokens: TokenService { TokenService(environment: stack.env) }
  var admin: AdminService {
    AdminService(environment: stack.env, cleanup: cleanup, backupDirectory: directory.file("backups"))
  }
  /// A clean-up worker that never runs by itself: tests call `runPass`.
  var cleanup: CleanupWorker { CleanupWorker(environment: stack.env, batchSize: 7) }
  var storePath: String { directory.file("anonauth.db") }

  private init(
    directory: TemporaryDirectory, clock: ManualClock, masterKey: [UInt8], ipPolicy: EndUserIPPolicy,
    admission: AdmissionLimits, stack: ServiceStack, apiKey: String, adminKey: String, opened: OpenStacks
  ) {
    self.directory = directory
    self.clock = clock
    self.masterKey = masterKey
    self.ipPolicy = ipPolicy
    self.admission = admission
    self.stack = stack
    self.apiKey = apiKey
    self.adminKey = adminKey
    self.opened = opened
  }

  /// Builds a harness, runs `body`, then closes every store it opened and removes the
  /// directory, whatever happened; waits for one of `HarnessSlots` first.
  /// - Parameter admission: production's limits by default, as the daemon runs; a test
  ///   that wants none says so (`.off`).
  static func with<T>(
    trustedProxies: [IPNetwork] = [], admission: AdmissionLimits = AdmissionLimits(),
    _ body: (ServiceHarness) async throws -> T
  ) async throws -> T {
    try await HarnessSlots.shared.run {
      try await open(trustedProxies: trustedProxies, admission: admission, body)
    }
  }

  private static func open<T>(
    trustedProxies: [IPNetwork], admission: AdmissionLimits, _ body: (ServiceHarness) async throws -> T
  ) async throws -> T {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let opened = OpenStacks()
    return try await withAsyncCleanup(
      {
        let harness = try await make(
          directory: directory, ipPolicy: EndUserIPPolicy(trustedProxies: trustedProxies),
          admission: admission, opened: opened)
        return try await body(harness)
      }, cleanup: { await opened.closeAll() })
  }

  private static func make(
    directory: TemporaryDirectory, ipPolicy: EndUserIPPolicy, admission: AdmissionLimits, opened: OpenStacks
  ) async throws -> ServiceHarness {
    let clock = ManualClock()
    let masterKey = try SecureRandom.bytes(32)
    let stack = try await ServiceStack.open(
      path: directory.file("anonauth.db"), clock: clock, masterKey: masterKey, ipPolicy: ipPolicy,
      admission: admission)
    opened.add(stack)
    try await stack.minter.start()
    let adminKey = try await stack.directory.createAdminKey(label: "test")
    let bare = ServiceHarness(
      directory: directory, clock: clock, masterKey: masterKey, ipPolicy: ipPolicy, admission: admission,
      stack: stack, apiKey: "", adminKey: adminKey, opened: opened)
    let apiKey = try await bare.makeProject(projectID)
    return ServiceHarness(
      directory: directory, clock: clock, masterKey: masterKey, ipPolicy: ipPolicy, admission: admission,
      stack: stack, apiKey: apiKey, adminKey: adminKey, opened: opened)
  }

  // MARK: Restart

  /// Closes this harness's store and opens the same file again with `masterKey`; the
  /// minter of the new stack is not started.
  func reopen(masterKey: [UInt8]) async throws -> ServiceStack {
    await stack.close()
    let next = try await ServiceStack.open(
      path: storePath, clock: clock, masterKey: masterKey, ipPolicy: ipPolicy, admission: admission)
    opened.add(next)
    return next
  }

  /// What a daemon restart does: the same file, the same master key, everything built again.
  func restarted() async throws -> ServiceHarness {
    let next = try await reopen(masterKey: masterKey)
    try await next.minter.start()
    return ServiceHarness(
      directory: directory, clock: clock, masterKey: masterKey, ipPolicy: ipPolicy, admission: admission,
      stack: next, apiKey: apiKey, adminKey: adminKey, opened: opened)
  }

  // MARK: Call contexts

  static func path(_ service: String, _ method: String) -> String { "/\(service)/\(method)" }

  /// A context exactly as given: no credentials are added.
  func context(
    _ method: String, metadata: [String: String] = [:], peerIP: String? = ServiceHarness.defaultPeer
  ) -> CallContext {
    CallContext(method: method, metadata: metadata, peerIP: peerIP, requestID: RequestID.make())
  }

  /// An AccountService call with `x-api-key` (this harness's project unless told).
  func accountContext(
    _ method: String, apiKey: String? = nil, peerIP: String? = ServiceHarness.defaultPeer,
    extra: [String: String] = [:]
  ) -> CallContext {
    var metadata = extra
    metadata["x-api-key"] = apiKey ?? self.apiKey
    return context(Self.path(AccountService.name, method), metadata: metadata, peerIP: peerIP)
  }

  /// A TokenService call with `x-api-key` (this harness's project unless told).
  func tokenContext(_ method: String, apiKey: String? = nil) -> CallContext {
    context(Self.path(TokenService.name, method), metadata: ["x-api-key": apiKey ?? self.apiKey])
  }

  /// An AdminService call with `authorization: Bearer <admin key>`.
  func adminContext(_ method: String) -> CallContext {
    context(Self.path(AdminService.name, method), metadata: ["authorization": "Bearer \(adminKey)"])
  }

  // MARK: Shortcuts

  /// An anonymous sign-up to this harness's project (or the project of `apiKey`).
  func signUp(
    apiKey: String? = nil, peerIP: String? = ServiceHarness.defaultPeer, extra: [String: String] = [:]
  ) async throws(RPCError) -> AuthResponse {
    try await accounts.signUp(
      SignUpRequest(kind: .anonymous(AnonymousSignUp())),
      context: accountContext("SignUp", apiKey: apiKey, peerIP: peerIP, extra: extra))
  }

  func refresh(_ refreshToken: String, apiKey: String? = nil) async throws(RPCError) -> AuthResponse {
    try await accounts.refreshToken(
      RefreshTokenRequest(refreshToken: refreshToken), context: accountContext("RefreshToken", apiKey: apiKey)
    )
  }

  func accountInfo(_ idToken: String, apiKey: String? = nil) async throws(RPCError) -> AccountInfo {
    try await accounts.getAccountInfo(
      GetAccountInfoRequest(idToken: idToken), context: accountContext("GetAccountInfo", apiKey: apiKey))
  }

  func verify(_ idToken: String, checkRevoked: Bool = false, apiKey: String? = nil) async throws(RPCError)
    -> VerifyIdTokenResponse
  {
    try await tokens.verifyIdToken(
      VerifyIdTokenRequest(idToken: idToken, checkRevoked: checkRevoked),
      context: tokenContext("VerifyIdToken", apiKey: apiKey))
  }

  func publicKeys() -> GetPublicKeysResponse {
    tokens.getPublicKeys(GetPublicKeysRequest(), context: tokenContext("GetPublicKeys"))
  }

  /// Creates a project with anonymous sign-in on, through AdminService; returns its API key.
  func makeProject(_ projectID: String) async throws(RPCError) -> String {
    var config = ProjectConfig()
    config.anonymousEnabled = true
    return try await TestProject.create(
      projectID, admin: admin, context: adminContext, config: config, mask: ["anonymous_enabled"])
  }

  func config(_ projectID: String = ServiceHarness.projectID) throws(RPCError) -> ProjectConfig {
    try admin.getProjectConfig(
      GetProjectConfigRequest(projectId: projectID), context: adminContext("GetProjectConfig"))
  }

  @discardableResult
  func updateConfig(_ config: ProjectConfig, mask: [String]) async throws(RPCError) -> ProjectConfig {
    try await admin.updateProjectConfig(
      UpdateProjectConfigRequest(config: config, updateMask: mask),
      context: adminContext("UpdateProjectConfig"))
  }

  /// Sets this project's per-IP sign-up quota (0: the default).
  func setSignUpQuota(_ quota: UInt32) async throws(RPCError) {
    var config = ProjectConfig()
    config.projectId = projectID
    config.signUpQuotaPerHour = quota
    try await updateConfig(config, mask: ["sign_up_quota_per_hour"])
  }

  // MARK: The store, directly

  func accountCount() async throws -> Int64 {
    try await store.read { try AccountsRepository.count($0) }
  }

  func account(_ localID: String) async throws -> AccountRecord? {
    let projectID = projectID
    return try await store.read { try AccountsRepository.get($0, projectID: projectID, localID: localID) }
  }

  /// Changes an account in a store write, as an admin tool would.
  func updateAccount(_ localID: String, _ change: @escaping @Sendable (inout AccountRecord) -> Void)
    async throws
  {
    let projectID = projectID
    try await store.write { db in
      guard var account = try AccountsRepository.get(db, projectID: projectID, localID: localID) else {
        throw HarnessError("no account \(localID)")
      }
      change(&account)
      try AccountsRepository.update(db, account)
    }
  }

  /// The IP keys the sign-up quota counted, once per sign-up: oldest first, in key order
  /// within one time.
  func countedIPKeys() async throws -> [String] {
    try await store.read { db in
      try db.query("SELECT ip_key, count FROM sign_up_buckets ORDER BY minute, oldest_ms, ip_key").flatMap {
        Array(repeating: try $0.string(0), count: Int(try $0.int64(1)))
      }
    }
  }
}

struct HarnessError: Error, CustomStringConvertible {
  let description: String
  init(_ description: String) { self.description = description }
}
