import AnonAuthCrypto
import AnonAuthService
import AnonAuthServiceTestSupport
import AnonAuthStore
import AnonAuthWire
import Foundation
import Testing

/// The service layer in-process for the linking tests: a real SQLite file in a
/// temporary directory, a `ManualClock`, a fake network (OIDC keys, Facebook's Graph
/// API), cheap scrypt parameters, and a project with anonymous and email/password sign-in
/// on and these providers:
///
/// | provider | keys |
/// | --- | --- |
/// | google.com | inline JWKS, Google's default issuers |
/// | oidc.inline | inline JWKS, issuer https://issuer.test |
/// | oidc.remote | jwks_url https://remote.test/jwks (the fake network) |
/// | oidc.off | configured but disabled |
/// | facebook.com | Graph API at https://graph.test (the fake network) |
struct LinkingHarness: Sendable {
  static let projectID = "link-project"
  static let peer = "198.51.100.7"
  static let remoteJWKS = "https://remote.test/jwks"

  let directory: String
  let clock: ManualClock
  let store: Store
  let pool: CPUPool
  let env: ServiceEnvironment
  let outbound: FakeOutbound
  let graph: FakeGraphAPI
  let google: FakeIssuer
  let oidc: FakeIssuer
  let remote: FakeIssuer
  let apiKey: String
  let adminKey: String

  var accounts: AccountService { AccountService(environment: env) }
  var tokens: TokenService { TokenService(environment: env) }
  var admin: AdminService {
    AdminService(
      environment: env, cleanup: CleanupWorker(environment: env), backupDirectory: directory + "/backups")
  }
  var nowSeconds: Int64 { clock.nowSeconds() }

  /// Builds a harness, runs `body`, and always closes the store and removes the files;
  /// waits for one of `HarnessSlots` first.
  /// - Parameter scryptLn: log2 N of new password hashes (cheap by default).
  static func with<T>(
    throttle: SignInThrottle = SignInThrottle(), scryptLn: Int = 10,
    admission: AdmissionLimits = AdmissionLimits(),
    passwordPool makePasswordPool: @Sendable () -> CPUPool = {
      CPUPool(threads: 2, name: "anonauth-linking-scrypt", maxQueued: 64)
    },
    _ body: (LinkingHarness) async throws -> T
  ) async throws -> T {
    try await HarnessSlots.shared.run {
      try await open(
        throttle: throttle, scryptLn: scryptLn, admission: admission, passwordPool: makePasswordPool, body)
    }
  }

  private static func open<T>(
    throttle: SignInThrottle, scryptLn: Int, admission: AdmissionLimits,
    passwordPool makePasswordPool: @Sendable () -> CPUPool, _ body: (LinkingHarness) async throws -> T
  ) async throws -> T {
    try await TestStore.with("linking", passwordPool: makePasswordPool) { opened in
      try await body(make(opened, throttle: throttle, scryptLn: scryptLn, admission: admission))
    }
  }

  private static func make(
    _ opened: TestStore, throttle: SignInThrottle, scryptLn: Int, admission: AdmissionLimits
  ) async throws -> LinkingHarness {
    let clock = ManualClock()
    let (masterKey, projects, minter) = try await opened.core(
      clock: clock, issuerPrefix: "https://anonauth.test/")
    let (directory, store, pool) = (opened.directory.path, opened.store, opened.pool)
    let outbound = FakeOutbound()
    let env = ServiceEnvironment(
      store: store, directory: projects, minter: minter, clock: clock,
      ipPolicy: EndUserIPPolicy(trustedProxies: []), metrics: ServiceMetrics(), logger: .silent,
      masterKey: masterKey, outbound: outbound,
      passwordHasher: PasswordHasher(parameters: try ScryptParameters(ln: scryptLn, r: 8, p: 1)),
      signInThrottle: throttle, passwordPool: opened.passwordPool, admissionLimits: admission)
    let graph = FakeGraphAPI(appID: "fb-app", appSecret: "fb-secret")
    graph.install(on: outbound)
    let google = try FakeIssuer(issuer: "https://accounts.google.com", clientID: "google-client")
    let oidc = try FakeIssuer(issuer: "https://issuer.test", clientID: "oidc-client")
    let remote = try FakeIssuer(issuer: "https://remote.test", clientID: "remote-client")
    outbound.route(remoteJWKS) { _ in
      OutboundResponse(status: 200, body: Array(remote.jwksJSON.utf8), freshnessSeconds: 600)
    }

    let adminKey = try await projects.createAdminKey(label: "linking-test")
    let admin = AdminService(
      environment: env, cleanup: CleanupWorker(environment: env), backupDirectory: directory + "/backups")
    let adminContext = { (method: String) in CallContext.adminSetup(method, adminKey: adminKey, peerIP: peer)
    }
    var config = ProjectConfig()
    config.anonymousEnabled = true
    config.emailPasswordEnabled = true
    config.idps = [
      IdpConfig(
        providerId: "google.com", enabled: true, clientId: google.clientID, jwksJson: google.jwksJSON),
      IdpConfig(
        providerId: "oidc.inline", enabled: true, clientId: oidc.clientID, issuer: oidc.issuer,
        jwksJson: oidc.jwksJSON),
      IdpConfig(
        providerId: "oidc.remote", enabled: true, clientId: remote.clientID, issuer: remote.issuer,
        jwksUrl: remoteJWKS),
      IdpConfig(
        providerId: "oidc.off", enabled: false, clientId: oidc.clientID, issuer: oidc.issuer,
        jwksJson: oidc.jwksJSON),
      IdpConfig(
        providerId: "facebook.com", enabled: true, clientId: graph.appID, clientSecret: graph.appSecret,
        apiBaseUrl: FakeGraphAPI.base),
    ]
    let apiKey = try await TestProject.create(
      projectID, admin: admin, context: adminContext, config: config,
      mask: ["anonymous_enabled", "email_password_enabled", "idps"])
    return LinkingHarness(
      directory: directory, clock: clock, store: store, pool: pool, env: env, outbound: outbound,
      graph: graph,
      google: google, oidc: oidc, remote: remote, apiKey: apiKey, adminKey: adminKey)
  }

  // MARK: Calls

  func context(_ method: String, ip: String = LinkingHarness.peer) -> CallContext {
    CallContext(
      method: "/\(AccountService.name)/\(method)", metadata: ["x-api-key": apiKey], peerIP: ip,
      requestID: "test")
  }

  func anonymous(ip: String = LinkingHarness.peer) async throws(RPCError) -> AuthResponse {
    try await accounts.signUp(
      SignUpRequest(kind: .anonymous(AnonymousSignUp())), context: context("SignUp", ip: ip))
  }

  func signUp(email: String, password: String, ip: String = LinkingHarness.peer) async throws(RPCError)
    -> AuthResponse
  {
    try await accounts.signUp(
      SignUpRequest(kind: .emailPassword(EmailPasswordSignUp(email: email, password: password))),
      context: context("SignUp", ip: ip))
  }

  func signIn(email: String, password: String, ip: String = LinkingHarness.peer) async throws(RPCError)
    -> AuthResponse
  {
    try await accounts.signInWithPassword(
      SignInWithPasswordRequest(email: email, password: password),
      context: context("SignInWithPassword", ip: ip))
  }

  func signIn(_ credential: Credential, ip: String = LinkingHarness.peer) async throws(RPCError)
    -> AuthResponse
  {
    try await accounts.signInWithIdp(
      SignInWithIdpRequest(credential: credential), context: context("SignInWithIdp", ip: ip))
  }

  func link(_ idToken: String, _ credential: Credential?) async throws(RPCError) -> AuthResponse {
    try await accounts.linkWithCredential(
      LinkWithCredentialRequest(idToken: idToken, credential: credential),
      context: context("LinkWithCredential"))
  }

  func unlink(_ idToken: String, _ providerID: String) async throws(RPCError) -> AccountInfo {
    try await accounts.unlinkProvider(
      UnlinkProviderRequest(idToken: idToken, providerId: providerID), context: context("UnlinkProvider"))
  }

  func verify(_ idToken: String, checkRevoked: Bool = true) async throws(RPCError) -> VerifyIdTokenResponse {
    try await tokens.verifyIdToken(
      VerifyIdTokenRequest(idToken: idToken, checkRevoked: checkRevoked),
      context: CallContext(
        method: "/\(TokenService.name)/VerifyIdToken", metadata: ["x-api-key": apiKey], peerIP: Self.peer,
        requestID: "test"))
  }

  func refresh(_ token: String) async throws(RPCError) -> AuthResponse {
    try await accounts.refreshToken(
      RefreshTokenRequest(refreshToken: token), context: context("RefreshToken"))
  }

  /// Changes the project's config through AdminService.
  func updateConfig(_ change: (inout ProjectConfig) -> Void, mask: [String]) async throws {
    let context = CallContext(
      method: "/\(AdminService.name)/UpdateProjectConfig", metadata: ["authorization": "Bearer \(adminKey)"],
      peerIP: Self.peer, requestID: "test")
    var config = ProjectConfig()
    config.projectId = Self.projectID
    change(&config)
    _ = try await admin.updateProjectConfig(
      UpdateProjectConfigRequest(config: config, updateMask: mask), context: context)
  }

  // MARK: Credentials

  static func password(_ email: String, _ password: String) -> Credential {
    Credential(providerId: "password", email: email, password: password)
  }

  static func idToken(_ providerID: String, _ token: String, nonce: String = "") -> Credential {
    Credential(providerId: providerID, idToken: token, nonce: nonce)
  }

  static func facebook(_ accessToken: String) -> Credential {
    Credential(providerId: "facebook.com", accessToken: accessToken)
  }

  func googleCredential(sub: String, email: String? = nil) throws -> Credential {
    Self.idToken("google.com", try google.token(sub: sub, now: nowSeconds, email: email))
  }

  // MARK: The store, directly

  /// Everything about an account that an error must leave unchanged.
  struct Snapshot: Equatable, Sendable {
    let account: AccountRecord?
    let identities: [IdentityRecord]
    let refreshTokens: Int64
    let accounts: Int64
  }

  func snapshot(_ localID: String) async throws -> Snapshot {
    let projectID = Self.projectID
    return try await store.read { db in
      Snapshot(
        account: try AccountsRepository.get(db, projectID: projectID, localID: localID),
        identities: try AccountsRepository.identities(db, projectID: projectID, localID: localID),
        refreshTokens: try db.queryOne(
          "SELECT count(*) FROM refresh_sessions WHERE local_id = ?", [.text(localID)]
        ).map { try $0.int64(0) } ?? 0,
        accounts: try AccountsRepository.count(db))
    }
  }

  /// `body` fails with `reason` (`expectLinkError`) and leaves `localID`'s rows as they
  /// were.
  func expectRefusedUnchanged<T>(
    _ localID: String, _ reason: Reason, sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () async throws -> T
  ) async throws {
    let before = try await snapshot(localID)
    await expectLinkError(reason, sourceLocation: sourceLocation, body)
    #expect(try await snapshot(localID) == before, sourceLocation: sourceLocation)
  }

  func account(_ localID: String) async throws -> AccountRecord {
    try #require(try await snapshot(localID).account)
  }

  /// Changes an account behind the service's back, as an admin tool or clean-up would.
  func change(_ localID: String, _ body: @escaping @Sendable (inout AccountRecord) -> Void) async throws {
    let projectID = Self.projectID
    try await store.write { db in
      guard var account = try AccountsRepository.get(db, projectID: projectID, localID: localID) else {
        throw LinkingSetupError("no account \(localID)")
      }
      body(&account)
      try AccountsRepository.update(db, account)
    }
  }

  func signUpsCounted(_ provider: String) async throws -> Int64 {
    try await store.read { db in
      try db.queryOne(
        "SELECT coalesce(sum(count), 0) FROM sign_ups_daily WHERE provider = ?", [.text(provider)]
      ).map { try $0.int64(0) } ?? 0
    }
  }
}

/// Expects `body` to fail with `reason` (and its code); returns the error. The body may
/// throw other errors while it builds its request; they fail the expectation.
@discardableResult
func expectLinkError<T>(
  _ reason: Reason, sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> T
) async -> RPCError? {
  do {
    _ = try await body()
    Issue.record("expected \(reason), the call succeeded", sourceLocation: sourceLocation)
    return nil
  } catch let error as RPCError {
    #expect(error.reason == reason.name, "\(error)", sourceLocation: sourceLocation)
    #expect(error.code == reason.code, sourceLocation: sourceLocation)
    return error
  } catch {
    Issue.record("expected \(reason), got \(error)", sourceLocation: sourceLocation)
    return nil
  }
}
