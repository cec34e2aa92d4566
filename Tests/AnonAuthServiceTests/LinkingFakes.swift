import AnonAuthCrypto
import AnonAuthService
import Foundation
import Synchronization

/// Why a linking test could not set itself up.
struct LinkingSetupError: Error, CustomStringConvertible {
  let description: String
  init(_ description: String) { self.description = description }
}

/// Keys made once for every linking test: RSA key generation takes a while.
enum LinkingTestKeys {
  static let rsa: RSASigningKey? = try? RSASigningKey.generate(bits: 2048)
  static let ec: ECP256SigningKey? = try? ECP256SigningKey.generate()
  /// A second issuer's keys: tokens signed with these must be refused.
  static let otherRSA: RSASigningKey? = try? RSASigningKey.generate(bits: 2048)
  static let otherEC: ECP256SigningKey? = try? ECP256SigningKey.generate()
}

/// An OpenID Connect provider played by the test: its own RSA and P-256 keys, a JWKS,
/// and ID tokens with whatever claims a test wants.
struct FakeIssuer: Sendable {
  let issuer: String
  let clientID: String
  let rsa: RSASigningKey
  let ec: ECP256SigningKey
  static let rsaKID = "rsa-1"
  static let ecKID = "ec-1"

  init(issuer: String, clientID: String) throws {
    guard let rsa = LinkingTestKeys.rsa, let ec = LinkingTestKeys.ec else {
      throw LinkingSetupError("test keys could not be made")
    }
    self.issuer = issuer
    self.clientID = clientID
    self.rsa = rsa
    self.ec = ec
  }

  /// The provider's JWKS: both keys, plus an encryption key and a P-384 key that a
  /// verifier must skip.
  var jwksJSON: String {
    var rsaJWK = rsa.publicKey.jwk(kid: Self.rsaKID).mapValues { JSONValue.string($0) }
    rsaJWK["alg"] = "RS256"
    let ecJWK = ec.jwk(kid: Self.ecKID).mapValues { JSONValue.string($0) }
    let skipped: [JSONValue] = [
      ["kty": "RSA", "use": "enc", "kid": "enc-1", "n": "AQAB", "e": "AQAB"],
      ["kty": "EC", "crv": "P-384", "kid": "p384", "x": "AA", "y": "AA"],
    ]
    return JSONValue.object(["keys": .array([.object(rsaJWK), .object(ecJWK)] + skipped)]).jsonText
  }

  /// Standard claims for `sub`, valid at `now`.
  func claims(sub: String, now: Int64, email: String? = nil, nonce: String? = nil) -> [String: JSONValue] {
    var claims: [String: JSONValue] = [
      "iss": .string(issuer), "aud": .string(clientID), "sub": .string(sub), "iat": .int(now),
      "exp": .int(now + 3600), "name": "Test User",
    ]
    if let email {
      claims["email"] = .string(email)
      claims["email_verified"] = true
    }
    if let nonce { claims["nonce"] = .string(nonce) }
    return claims
  }

  enum Signer { case rsa, ec, otherRSA, otherEC }

  func sign(_ claims: [String: JSONValue], with signer: Signer = .rsa, kid: String? = nil) throws -> String {
    switch signer {
    case .rsa: return try JWT.sign(claims: claims, key: rsa, kid: kid ?? Self.rsaKID)
    case .ec: return try JWT.sign(claims: claims, key: ec, kid: kid ?? Self.ecKID)
    case .otherRSA:
      guard let key = LinkingTestKeys.otherRSA else { throw LinkingSetupError("no key") }
      return try JWT.sign(claims: claims, key: key, kid: kid ?? Self.rsaKID)
    case .otherEC:
      guard let key = LinkingTestKeys.otherEC else { throw LinkingSetupError("no key") }
      return try JWT.sign(claims: claims, key: key, kid: kid ?? Self.ecKID)
    }
  }

  func token(sub: String, now: Int64, email: String? = nil, nonce: String? = nil, with signer: Signer = .rsa)
    throws -> String
  {
    try sign(claims(sub: sub, now: now, email: email, nonce: nonce), with: signer)
  }
}

/// The network as the service layer sees it, played by the test: answers by URL prefix,
/// remembers every URL asked for.
final class FakeOutbound: OutboundHTTP {
  typealias Handler = @Sendable (String) throws -> OutboundResponse
  private let routes = Mutex<[(prefix: String, handler: Handler)]>([])
  private let requested = Mutex<[String]>([])
  private let holds = Mutex<[(prefix: String, gate: AsyncGate)]>([])

  /// Requests for URLs starting with `prefix` wait until `gate` opens.
  func hold(_ prefix: String, until gate: AsyncGate) { holds.withLock { $0.append((prefix, gate)) } }

  struct Refused: Error, CustomStringConvertible {
    var description: String { "connection refused" }
  }

  func route(_ prefix: String, _ handler: @escaping Handler) {
    routes.withLock { $0.insert((prefix, handler), at: 0) }
  }

  var urls: [String] { requested.withLock { $0 } }

  func count(_ prefix: String) -> Int { urls.filter { $0.hasPrefix(prefix) }.count }

  func get(_ url: String) async throws -> OutboundResponse {
    requested.withLock { $0.append(url) }
    if let gate = holds.withLock({ $0.first { url.hasPrefix($0.prefix) }?.gate }) { await gate.wait() }
    guard let handler = routes.withLock({ $0.first { url.hasPrefix($0.prefix) }?.handler }) else {
      throw Refused()
    }
    return try handler(url)
  }

  /// POSTs are answered by the same routes (the form is not shown to them).
  func post(_ url: String, form: [(String, String)]) async throws -> OutboundResponse { try await get(url) }
}

/// Holds async callers until opened; counts how many are held.
final class AsyncGate: Sendable {
  private struct State {
    var opened = false
    var entered = 0
    var waiters: [CheckedContinuation<Void, Never>] = []
  }

  private let state = Mutex(State())

  /// How many callers reached `wait` (held or let through).
  var entered: Int { state.withLock { $0.entered } }

  func wait() async {
    await withCheckedContinuation { continuation in
      let go = state.withLock { state -> Bool in
        state.entered += 1
        if state.opened { return true }
        state.waiters.append(continuation)
        return false
      }
      if go { continuation.resume() }
    }
  }

  func open() {
    let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
      state.opened = true
      defer { state.waiters = [] }
      return state.waiters
    }
    for waiter in waiters { waiter.resume() }
  }
}

/// Facebook's Graph API as far as the verifier uses it, for one app.
final class FakeGraphAPI: Sendable {
  struct UserToken: Sendable {
    var userID: String
    var appID: String
    var isValid = true
    var expiresAt: Int64 = 0
    var name = "Facebook User"
    var email: String?
  }

  static let base = "https://graph.test"
  let appID: String
  let appSecret: String
  private let tokens = Mutex<[String: UserToken]>([:])
  /// /me requests whose appsecret_proof was wrong.
  let badProofs = Atomic<Int>(0)

  init(appID: String, appSecret: String) {
    self.appID = appID
    self.appSecret = appSecret
  }

  func add(_ token: String, _ user: UserToken) { tokens.withLock { $0[token] = user } }

  func install(on outbound: FakeOutbound) {
    outbound.route(Self.base + "/debug_token?") { [self] url in debugToken(url) }
    outbound.route(Self.base + "/me?") { [self] url in me(url) }
  }

  static func query(_ url: String) -> [String: String] {
    guard let components = URLComponents(string: url) else { return [:] }
    var out: [String: String] = [:]
    for item in components.queryItems ?? [] { out[item.name] = item.value ?? "" }
    return out
  }

  private func json(_ status: Int, _ value: JSONValue) -> OutboundResponse {
    OutboundResponse(status: status, body: value.jsonBytes)
  }

  private func debugToken(_ url: String) -> OutboundResponse {
    let query = Self.query(url)
    guard query["access_token"] == "\(appID)|\(appSecret)" else {
      return json(400, ["error": ["message": "bad app token"]])
    }
    guard let user = tokens.withLock({ $0[query["input_token"] ?? ""] }) else {
      return json(200, ["data": ["is_valid": false]])
    }
    return json(
      200,
      [
        "data": [
          "app_id": .string(user.appID), "is_valid": .bool(user.isValid), "expires_at": .int(user.expiresAt),
          "user_id": .string(user.userID), "type": "USER",
        ]
      ])
  }

  private func me(_ url: String) -> OutboundResponse {
    let query = Self.query(url)
    let token = query["access_token"] ?? ""
    let proof = HMACSHA256.authenticationCode(key: Array(appSecret.utf8), message: Array(token.utf8))
      .map { String(format: "%02x", $0) }.joined()
    guard query["appsecret_proof"] == proof else {
      badProofs.add(1, ordering: .relaxed)
      return json(400, ["error": ["message": "bad appsecret_proof"]])
    }
    guard let user = tokens.withLock({ $0[token] }), user.isValid else {
      return json(400, ["error": ["message": "bad token"]])
    }
    var body: [String: JSONValue] = ["id": .string(user.userID), "name": .string(user.name)]
    if let email = user.email { body["email"] = .string(email) }
    return json(200, .object(body))
  }
}
