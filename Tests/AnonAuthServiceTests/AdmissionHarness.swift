import AnonAuthCrypto
import AnonAuthService
import AnonAuthServiceTestSupport
import AnonAuthStore
import AnonAuthWire
import Foundation
import Testing

/// The service layer in-process with fair admission on (`AdmissionLimits` as given): a
/// real SQLite file, a `ManualClock` (rates refill only when a test moves it), cheap
/// scrypt, and two projects, "adm-a" and "adm-b", with anonymous and email/password
/// sign-in on and a sign-up quota high enough never to be what refuses.
final class AdmissionHarness: Sendable {
  static let projects = ["adm-a", "adm-b"]

  let clock: ManualClock
  let env: ServiceEnvironment
  let apiKeys: [String: String]

  var accounts: AccountService { AccountService(environment: env) }
  var admission: Admission { env.admission }

  private init(clock: ManualClock, env: ServiceEnvironment, apiKeys: [String: String]) {
    self.clock = clock
    self.env = env
    self.apiKeys = apiKeys
  }

  /// Builds a harness, runs `body`, and always closes the store and removes the files;
  /// waits for one of `HarnessSlots` first.
  static func with<T>(
    limits: AdmissionLimits,
    passwordPool makePasswordPool: @Sendable () -> CPUPool = {
      CPUPool(threads: 2, name: "anonauth-admission-scrypt", maxQueued: 64)
    },
    _ body: (AdmissionHarness) async throws -> T
  ) async throws -> T {
    try await HarnessSlots.shared.run { try await open(limits: limits, passwordPool: makePasswordPool, body) }
  }

  private static func open<T>(
    limits: AdmissionLimits, passwordPool makePasswordPool: @Sendable () -> CPUPool,
    _ body: (AdmissionHarness) async throws -> T
  ) async throws -> T {
    try await TestStore.with("admission", passwordPool: makePasswordPool) { opened in
      try await body(make(opened, limits: limits))
    }
  }

  private static func make(_ opened: TestStore, limits: AdmissionLimits) async throws -> AdmissionHarness {
    let clock = ManualClock()
    let (masterKey, directory, minter) = try await opened.core(
      clock: clock, issuerPrefix: "https://anonauth.test/")
    let env = ServiceEnvironment(
      store: opened.store, directory: directory, minter: minter, clock: clock,
      ipPolicy: EndUserIPPolicy(trustedProxies: []), metrics: ServiceMetrics(), logger: .silent,
      masterKey: masterKey,
      passwordHasher: PasswordHasher(parameters: try ScryptParameters(ln: 10, r: 8, p: 1)),
      passwordPool: opened.passwordPool, admissionLimits: limits)
    let adminKey = try await directory.createAdminKey(label: "admission-test")
    let admin = AdminService(
      environment: env, cleanup: CleanupWorker(environment: env), backupDirectory: NSTemporaryDirectory())
    let context = { (method: String) in CallContext.adminSetup(method, adminKey: adminKey) }
    var apiKeys: [String: String] = [:]
    for projectID in projects {
      var config = ProjectConfig()
      config.anonymousEnabled = true
      config.emailPasswordEnabled = true
      config.signUpQuotaPerHour = 1_000_000
      apiKeys[projectID] = try await TestProject.create(
        projectID, admin: admin, context: context, config: config,
        mask: ["anonymous_enabled", "email_password_enabled", "sign_up_quota_per_hour"])
    }
    return AdmissionHarness(clock: clock, env: env, apiKeys: apiKeys)
  }

  // MARK: Calls

  func context(_ method: String, project: String, ip: String) -> CallContext {
    CallContext(
      method: "/\(AccountService.name)/\(method)", metadata: ["x-api-key": apiKeys[project] ?? ""],
      peerIP: ip,
      requestID: "test")
  }

  func anonymous(project: String = "adm-a", ip: String) async throws(RPCError) -> AuthResponse {
    try await accounts.signUp(
      SignUpRequest(kind: .anonymous(AnonymousSignUp())), context: context("SignUp", project: project, ip: ip)
    )
  }

  func signUp(email: String, project: String = "adm-a", ip: String) async throws(RPCError) -> AuthResponse {
    try await accounts.signUp(
      SignUpRequest(kind: .emailPassword(EmailPasswordSignUp(email: email, password: "secret-1"))),
      context: context("SignUp", project: project, ip: ip))
  }

  func signIn(email: String, password: String = "secret-1", project: String = "adm-a", ip: String)
    async throws(RPCError) -> AuthResponse
  {
    try await accounts.signInWithPassword(
      SignInWithPasswordRequest(email: email, password: password),
      context: context("SignInWithPassword", project: project, ip: ip))
  }

  /// Accounts in `project`.
  func accountCount(_ project: String) async throws -> Int64 {
    try await env.store.read { db in
      try db.queryOne("SELECT count(*) FROM accounts WHERE project_id = ?", [.text(project)]).map {
        try $0.int64(0)
      } ?? 0
    }
  }
}

extension AdmissionLimits {
  /// Everything off but what `change` sets.
  static func only(_ change: (inout AdmissionLimits) -> Void) -> AdmissionLimits {
    var limits = AdmissionLimits.off
    change(&limits)
    return limits
  }
}
