import AnonAuthCrypto
import AnonAuthRPCClient
import AnonAuthWire
import Foundation
import Synchronization

/// `anonauth bench password` and `anonauth bench link-oidc`: the linking worker's
/// throughput, measured against a running daemon.
enum CredentialBench {
  static func adminKey(_ arguments: Arguments, _ base: Connection) throws(CLIError) -> String {
    guard let key = arguments["admin-key"] ?? base.file["admin_key"] else {
      throw .usage("this bench needs the admin key (--admin-key or client.json)")
    }
    return key
  }

  /// Password sign-ins per second with the daemon's scrypt cost.
  static func password(_ arguments: Arguments) async throws(CLIError) {
    let base = try Connection(arguments)
    let apiKey = try base.apiKey()
    let adminKey = try adminKey(arguments, base)
    let email: String
    let password: String
    do {
      email = "bench-\(try SecureRandom.alphanumeric(12).lowercased())@example.com"
      password = try SecureRandom.base64URL(byteCount: 18)
    } catch {
      throw .failed("random generator failed")
    }
    var signUp = SignUpRequest()
    signUp.kind = .emailPassword(EmailPasswordSignUp(email: email, password: password))
    do {
      let _: AuthResponse = try await AccountServiceClient(base.client).signUp(
        signUp,
        metadata: ["x-api-key": apiKey, "authorization": "Bearer \(adminKey)", "x-end-user-ip": "10.255.0.1"])
    } catch {
      throw .failed("creating the bench account failed: \(error.reason): \(error.message)")
    }
    let payload = SignInWithPasswordRequest(email: email, password: password).serializedBytes()
    try await BenchCommand.measure(arguments, name: "password", defaultConnections: 8, defaultConcurrency: 2)
    {
      BenchCall(
        method: AccountServiceMethods.signInWithPassword.path, payload: payload,
        metadata: ["x-api-key": apiKey])
    }
  }

  static let providerID = "oidc.bench"
  static let issuer = "https://bench.anonauth.invalid"
  static let clientID = "anonauth-bench"

  /// LinkWithCredential calls per second for an OIDC (ES256, inline keys) credential.
  static func linkOIDC(_ arguments: Arguments) async throws(CLIError) {
    let base = try Connection(arguments)
    let apiKey = try base.apiKey()
    let adminKey = try adminKey(arguments, base)
    let count = try BenchCommand.int(arguments, "accounts", 4000)
    let key = try providerKey()
    let projectID = base.file["project_id"] ?? arguments["project"] ?? "demo-project"
    try await configureProvider(base.client, projectID: projectID, adminKey: adminKey, key: key)

    // Accounts and provider tokens are made before the clock starts.
    print("making \(count) anonymous accounts and ID tokens...")
    let accounts = try await anonymousAccounts(base.client, count: count, apiKey: apiKey, adminKey: adminKey)
    var payloads: [[UInt8]] = []
    payloads.reserveCapacity(accounts.count)
    for (index, account) in accounts.enumerated() {
      payloads.append(try linkPayload(idToken: account.idToken, key: key, subject: "\(index)"))
    }
    let next = BenchCommand.Counter()
    let all = payloads
    try await BenchCommand.measure(
      arguments, name: "link-oidc", defaultConnections: 16, defaultConcurrency: 4
    ) {
      let index = next.next() - 1
      guard index < all.count else { return nil }
      return BenchCall(
        method: AccountServiceMethods.linkWithCredential.path, payload: all[index],
        metadata: ["x-api-key": apiKey])
    }
  }

  /// A LinkWithCredential request that links a new oidc.bench identity (an ES256 ID token
  /// signed here, subject unique per run) to the account of `idToken`.
  static func linkPayload(idToken: String, key: ECP256SigningKey, subject: String) throws(CLIError) -> [UInt8]
  {
    let now = Int64(Date().timeIntervalSince1970)
    let claims: [String: JSONValue] = [
      "iss": .string(issuer), "aud": .string(clientID), "sub": .string("bench-\(now)-\(subject)"),
      "iat": .int(now), "exp": .int(now + 3600),
    ]
    let token: String
    do {
      token = try JWT.sign(claims: claims, key: key, kid: "bench")
    } catch {
      throw .failed("signing failed")
    }
    let credential = Credential(providerId: providerID, idToken: token)
    return LinkWithCredentialRequest(idToken: idToken, credential: credential).serializedBytes()
  }

  /// A new key for oidc.bench, whose ID tokens the link benches sign.
  static func providerKey() throws(CLIError) -> ECP256SigningKey {
    do {
      return try ECP256SigningKey.generate()
    } catch {
      throw .failed("key generation failed")
    }
  }

  /// Adds (or replaces) oidc.bench on the project, keeping its other providers (their
  /// secrets are kept by the server when not sent again).
  static func configureProvider(
    _ client: RPCClient, projectID: String, adminKey: String, key: ECP256SigningKey
  )
    async throws(CLIError)
  {
    let admin = ["authorization": "Bearer \(adminKey)"]
    do {
      var config: ProjectConfig = try await AdminServiceClient(client).getProjectConfig(
        GetProjectConfigRequest(projectId: projectID), metadata: admin)
      let jwks = JSONValue.object(["keys": [.object(key.jwk(kid: "bench").mapValues { .string($0) })]])
        .jsonText
      config.idps.removeAll { $0.providerId == providerID }
      config.idps.append(
        IdpConfig(providerId: providerID, enabled: true, clientId: clientID, issuer: issuer, jwksJson: jwks))
      let _: ProjectConfig = try await AdminServiceClient(client).updateProjectConfig(
        UpdateProjectConfigRequest(config: config, updateMask: [ProjectConfigField.idps.rawValue]),
        metadata: admin)
    } catch {
      throw .failed("configuring \(providerID) failed: \(error.reason): \(error.message)")
    }
  }

  /// `count` new anonymous accounts (their tokens), each from its own end-user IP (so the
  /// per-IP sign-up quota never refuses them). Made before a bench's clock starts.
  static func anonymousAccounts(_ client: RPCClient, count: Int, apiKey: String, adminKey: String)
    async throws(CLIError) -> [AuthResponse]
  {
    var request = SignUpRequest()
    request.kind = .anonymous(AnonymousSignUp())
    let payload = request.serializedBytes()
    let collected = Collected()
    let next = BenchCommand.Counter()
    await withTaskGroup(of: Void.self) { group in
      for _ in 0..<16 {
        group.addTask {
          while true {
            let n = next.next()
            if n > count { return }
            // Far above the range a bench's own sign-ups use, so no IP is shared.
            let ip = BenchCommand.endUserIP(n + (1 << 22))
            do {
              let bytes = try await client.callRaw(
                AccountServiceMethods.signUp.path, payload: payload,
                metadata: ["x-api-key": apiKey, "authorization": "Bearer \(adminKey)", "x-end-user-ip": ip])
              let response = try AuthResponse(serializedBytes: bytes)
              collected.accounts.withLock { $0.append(response) }
            } catch {
              collected.failures.add(1, ordering: .relaxed)
              collected.firstFailure.withLock { if $0 == nil { $0 = "\(error)" } }
            }
          }
        }
      }
    }
    let failed = collected.failures.load(ordering: .relaxed)
    if failed > 0 {
      let first = collected.firstFailure.withLock { $0 } ?? "?"
      throw .failed("\(failed) of \(count) anonymous sign-ups failed; the first: \(first)")
    }
    return collected.accounts.withLock { $0 }
  }

  /// What the sign-up tasks gather.
  final class Collected: Sendable {
    let accounts = Mutex<[AuthResponse]>([])
    let failures = Atomic<Int>(0)
    let firstFailure = Mutex<String?>(nil)
  }
}
