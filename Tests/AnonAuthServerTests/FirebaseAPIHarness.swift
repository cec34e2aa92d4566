import AnonAuthCrypto
import AnonAuthService
import AnonAuthServiceTestSupport
import AnonAuthStore
import AnonAuthWire
import Foundation
import Synchronization

@testable import AnonAuthServer

/// `FirebaseAPI` on the daemon's real router and services over a SQLite file in a
/// temporary directory: a project with anonymous and email/password sign-in on, its API
/// key, and every call record the API reported.
final class FirebaseAPIHarness: Sendable {
  static let projectID = "fb-api-test"

  let api: FirebaseAPI
  let apiKey: String
  let adminKey: String
  let clock: ManualClock
  let router: Router
  private let records: Records

  /// Every call record the API reported, in order.
  final class Records: Sendable {
    let list = Mutex<[FirebaseCallRecord]>([])
  }

  private init(
    api: FirebaseAPI, apiKey: String, adminKey: String, clock: ManualClock, router: Router,
    records: Records
  ) {
    self.api = api
    self.apiKey = apiKey
    self.adminKey = adminKey
    self.clock = clock
    self.router = router
    self.records = records
  }

  var callRecords: [FirebaseCallRecord] { records.list.withLock { $0 } }

  /// Builds the stack, runs `body`, and closes the store and pools whatever happened.
  static func with<T>(_ body: (FirebaseAPIHarness) async throws -> T) async throws -> T {
    try await TestStore.with("fbapi") { opened in
      try await body(make(opened))
    }
  }

  private static func make(_ opened: TestStore) async throws -> FirebaseAPIHarness {
    let clock = ManualClock()
    let (masterKey, directory, minter) = try await opened.core(
      clock: clock, issuerPrefix: "https://securetoken.google.com/")
    let env = ServiceEnvironment(
      store: opened.store, directory: directory, minter: minter, clock: clock,
      ipPolicy: EndUserIPPolicy(trustedProxies: []),
      metrics: ServiceMetrics(), logger: .silent, masterKey: masterKey, passwordPool: opened.passwordPool)
    var router = Router()
    ServiceRoutes.register(
      in: &router, environment: env, health: HealthService(state: ServingState()),
      cleanup: CleanupWorker(environment: env), backupDirectory: opened.directory.file("backups"))
    let adminKey = try await directory.createAdminKey(label: "test")
    let admin = ["authorization": "Bearer \(adminKey)"]
    let context = { (method: String) in
      CallContext(method: method, metadata: admin, peerIP: "127.0.0.1", requestID: "setup")
    }
    _ = try await router.handle(
      context(AdminServiceMethods.createProject.path),
      payload: CreateProjectRequest(projectId: projectID).serializedBytes())
    var config = ProjectConfig()
    config.projectId = projectID
    config.anonymousEnabled = true
    config.emailPasswordEnabled = true
    _ = try await router.handle(
      context(AdminServiceMethods.updateProjectConfig.path),
      payload: UpdateProjectConfigRequest(
        config: config, updateMask: ["anonymous_enabled", "email_password_enabled"]
      ).serializedBytes())
    let key = try CreateApiKeyResponse(
      serializedBytes: try await router.handle(
        context(AdminServiceMethods.createApiKey.path),
        payload: CreateApiKeyRequest(projectId: projectID).serializedBytes())
    ).apiKey
    let records = Records()
    let api = FirebaseAPI(
      router: router,
      corsOrigins: { [directory] key in (try? directory.project(apiKey: key))?.corsOrigins ?? [] },
      recordCall: { record in records.list.withLock { $0.append(record) } })
    return FirebaseAPIHarness(
      api: api, apiKey: key, adminKey: adminKey, clock: clock, router: router, records: records)
  }

  /// One answer: its status, headers and the body as JSON (nil when it is not JSON).
  struct Answer {
    let status: Int
    let headers: [(name: String, value: String)]
    let json: JSONValue?

    func header(_ name: String) -> String? { headers.first { $0.name == name }?.value }
    /// `error.message` of Firebase's error body.
    var errorMessage: String? { json?["error"]?["message"]?.stringValue }
    subscript(key: String) -> JSONValue? { json?[key] }
  }

  func send(
    _ path: String, method: String = "POST", body: [UInt8], key: String? = nil,
    headers: [(name: String, value: String)] = [("content-type", "application/json")]
  ) async -> Answer {
    let query = key.map { "key=\($0)" } ?? "key=\(apiKey)"
    let reply = await api.respond(
      to: HTTPRequest(method: method, path: path, query: query, headers: headers, body: body),
      info: HTTPCallInfo(peerIP: "198.51.100.7", listener: .rpcPort, requestID: "test"))
    return Answer(status: reply.status, headers: reply.headers, json: JSONValue(jsonBytes: reply.body))
  }

  func post(_ path: String, _ json: JSONValue, key: String? = nil) async -> Answer {
    await send(path, body: json.jsonBytes, key: key)
  }

  /// A new anonymous account: its `localId`, `idToken` and `refreshToken`.
  func anonymous() async throws -> (uid: String, idToken: String, refreshToken: String) {
    let answer = await post("/v1/accounts:signUp", ["returnSecureToken": true])
    guard answer.status == 200, let uid = answer["localId"]?.stringValue,
      let idToken = answer["idToken"]?.stringValue, let refresh = answer["refreshToken"]?.stringValue
    else {
      throw HarnessFailure(description: "signUp answered \(answer.status) \(String(describing: answer.json))")
    }
    return (uid, idToken, refresh)
  }

  struct HarnessFailure: Error, CustomStringConvertible {
    let description: String
  }
}
