import AnonAuthCrypto
import AnonAuthRPCClient
import AnonAuthWire
import Synchronization

/// `anonauth bench refresh | verify | account-info | mix`: the calls a real app's day is
/// mostly made of. Accounts and tokens are made before the clock starts.
enum TokenBenches {
  static func refresh(_ arguments: Arguments) async throws(CLIError) {
    let base = try Connection(arguments)
    let keys = try BenchCommand.Keys(arguments, base)
    let pool = TokenPool(try await accounts(arguments, base, keys).map(\.refreshToken))
    try await BenchCommand.measure(arguments, name: "refresh", defaultConcurrency: 4) {
      pool.refreshCall(keys.api)
    }
  }

  static func verify(_ arguments: Arguments) async throws(CLIError) {
    let base = try Connection(arguments)
    let keys = try BenchCommand.Keys(arguments, base)
    let checkRevoked = arguments.has("check-revoked")
    let payloads = try await accounts(arguments, base, keys, fallback: 256).map {
      VerifyIdTokenRequest(idToken: $0.idToken, checkRevoked: checkRevoked).serializedBytes()
    }
    let next = BenchCommand.Counter()
    try await BenchCommand.measure(
      arguments, name: checkRevoked ? "verify --check-revoked" : "verify", defaultConcurrency: 8
    ) {
      BenchCall(
        method: TokenServiceMethods.verifyIdToken.path, payload: payloads[next.next() % payloads.count],
        metadata: keys.api)
    }
  }

  static func accountInfo(_ arguments: Arguments) async throws(CLIError) {
    let base = try Connection(arguments)
    let keys = try BenchCommand.Keys(arguments, base)
    let payloads = try await accounts(arguments, base, keys, fallback: 256).map {
      GetAccountInfoRequest(idToken: $0.idToken).serializedBytes()
    }
    let next = BenchCommand.Counter()
    try await BenchCommand.measure(arguments, name: "account-info", defaultConcurrency: 8) {
      BenchCall(
        method: AccountServiceMethods.getAccountInfo.path, payload: payloads[next.next() % payloads.count],
        metadata: keys.api)
    }
  }

  /// The weights of `bench mix`, in percent: mostly refreshes and verifications, some
  /// sign-ups and account reads, a few links (OIDC, ES256, inline keys).
  static let mixWeights: [(kind: String, percent: Int)] = [
    ("refresh", 40), ("verify", 35), ("account-info", 12), ("signup", 10), ("link", 3),
  ]

  static func mix(_ arguments: Arguments) async throws(CLIError) {
    let base = try Connection(arguments)
    let keys = try BenchCommand.Keys(arguments, base)
    let made = try await accounts(arguments, base, keys)
    let pool = TokenPool(made.map(\.refreshToken))
    let idTokens = made.map(\.idToken)
    let linkKey = try CredentialBench.providerKey()
    let projectID = base.file["project_id"] ?? arguments["project"] ?? "demo-project"
    try await CredentialBench.configureProvider(
      base.client, projectID: projectID, adminKey: keys.adminKey, key: linkKey)
    // Anonymous accounts made by the mix's own sign-ups, waiting for a link.
    let linkable = Mutex<[String]>([])
    let next = BenchCommand.Counter()
    let signUp = SignUpRequest(kind: .anonymous(AnonymousSignUp())).serializedBytes()
    try await BenchCommand.measure(arguments, name: "mix", defaultConcurrency: 4) {
      let n = next.next()
      var roll = n &* 2_654_435_761 % 100  // a fixed, well-spread sequence of kinds
      var kind = mixWeights[0].kind
      for weight in mixWeights {
        if roll < weight.percent {
          kind = weight.kind
          break
        }
        roll -= weight.percent
      }
      let token = idTokens[n % idTokens.count]
      switch kind {
      case "refresh":
        if let call = pool.refreshCall(keys.api) { return call }
      case "verify":
        return BenchCall(
          method: TokenServiceMethods.verifyIdToken.path,
          payload: VerifyIdTokenRequest(idToken: token).serializedBytes(), metadata: keys.api, kind: kind)
      case "account-info":
        return BenchCall(
          method: AccountServiceMethods.getAccountInfo.path,
          payload: GetAccountInfoRequest(idToken: token).serializedBytes(), metadata: keys.api, kind: kind)
      case "link":
        if let target = linkable.withLock({ $0.popLast() }),
          let payload = try? CredentialBench.linkPayload(idToken: target, key: linkKey, subject: "mix-\(n)")
        {
          return BenchCall(
            method: AccountServiceMethods.linkWithCredential.path, payload: payload, metadata: keys.api,
            kind: kind)
        }
      default:
        break
      }
      return BenchCall(
        method: AccountServiceMethods.signUp.path, payload: signUp, metadata: keys.signUpMetadata(ip: n),
        kind: "signup",
        onSuccess: { bytes in
          guard let account = try? AuthResponse(serializedBytes: bytes) else { return }
          linkable.withLock { if $0.count < 10_000 { $0.append(account.idToken) } }
        })
    }
  }

  /// The accounts a bench works on: `--accounts`, or enough for every task (closed loop)
  /// or for a second of calls (open loop) to hold a token family of its own.
  static func accounts(
    _ arguments: Arguments, _ base: Connection, _ keys: BenchCommand.Keys, fallback: Int? = nil
  ) async throws(CLIError) -> [AuthResponse] {
    let options = try LoadRunner.options(arguments, defaultConnections: 64, defaultConcurrency: 8)
    let needed = fallback ?? max(256, options.rate ?? (options.connections * options.concurrency * 2))
    let count = try BenchCommand.int(arguments, "accounts", needed)
    print("making \(count) anonymous accounts...")
    return try await CredentialBench.anonymousAccounts(
      base.client, count: count, apiKey: keys.apiKey, adminKey: keys.adminKey)
  }
}
