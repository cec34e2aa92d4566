import AnonAuthCrypto
import AnonAuthStore
import AnonAuthWire
import Foundation
import Synchronization

/// The token-minting worker: owns the server-wide RS256 signing keys (made on first
/// start, rotated on request, private halves sealed under the master key), signs ID
/// tokens on the CPU pool, and verifies tokens it made.
public final class TokenMinter: Sendable {
  /// The longest ID-token TTL a project may set; a retired key stays published this long
  /// (plus clock skew) so that every token it signed can still be verified.
  public static let maxTTLSeconds: Int64 = 86_400
  /// How long verifiers may cache the published keys.
  public static let publicKeysMaxAgeSeconds: Int64 = 300

  private let store: Store
  private let clock: any ServiceClock
  private let masterKey: [UInt8]
  private let pool: CPUPool
  public let issuerPrefix: String
  private let ring = Mutex<(ring: SigningKeyRing?, order: [String])>((nil, []))

  public init(store: Store, clock: any ServiceClock, masterKey: [UInt8], issuerPrefix: String, pool: CPUPool)
  {
    self.store = store
    self.clock = clock
    self.masterKey = masterKey
    self.issuerPrefix = issuerPrefix
    self.pool = pool
  }

  public var hasKeys: Bool { ring.withLock { $0.ring != nil } }

  /// The pool that signs. Password hashing has a pool of its own
  /// (`ServiceEnvironment.passwordPool`), so signing never queues behind scrypt.
  public var cpuPool: CPUPool { pool }

  /// Loads the published keys, making the first one when there is none.
  /// - Throws: when a sealed key does not open: the master key is not the one the store
  ///   was made with.
  public func start() async throws {
    let now = clock.nowMs()
    let records = try await store.write { db in
      try SigningKeysRepository.deleteExpired(db, nowMs: now)
      return try SigningKeysRepository.published(db, nowMs: now)
    }
    if records.contains(where: { $0.retiredAtMs == 0 }) {
      try install(records)
    } else {
      _ = try await rotate()
    }
  }

  /// Makes a new active key; the old one stays published until its last token expires.
  /// - Returns: the new key's id.
  public func rotate() async throws -> String {
    let masterKey = self.masterKey
    let now = clock.nowMs()
    let record: SigningKeyRecord = try await pool.run { () throws(CryptoError) -> SigningKeyRecord in
      let key = try RSASigningKey.generate(bits: 2048)
      let kid = (try SecureRandom.bytes(20)).map { String(format: "%02x", $0) }.joined()
      let sealed = try AESGCM.seal(try key.pkcs8DER(), key: masterKey, associatedData: Array(kid.utf8))
      let certificate = try X509Certificate.selfSigned(
        for: key, commonName: "anonauth-signing-\(kid.prefix(8))",
        validFrom: Date(timeIntervalSince1970: Double(now) / 1000 - 86_400), validFor: 10 * 365 * 86_400)
      return SigningKeyRecord(
        kid: kid, privateKeySealed: sealed, certificatePEM: certificate, createdAtMs: now)
    }
    let publishUntil = now + Self.maxTTLSeconds * 1000 + ClockSkew.publishedKeyMs
    let records = try await store.write { db in
      try SigningKeysRepository.retireActive(db, atMs: now, publishUntilMs: publishUntil)
      try SigningKeysRepository.insert(db, record)
      return try SigningKeysRepository.published(db, nowMs: now)
    }
    try install(records)
    return record.kid
  }

  /// Installs the keys the store holds now if they differ from the ones in use: on a
  /// replicated store another node may have rotated them. Cheap when nothing changed (one
  /// read, no decryption).
  /// - Returns: whether the keys in use changed.
  @discardableResult
  public func refresh() async throws -> Bool {
    let now = clock.nowMs()
    let records = try await store.read { db in try SigningKeysRepository.published(db, nowMs: now) }
    let active = records.first { $0.retiredAtMs == 0 }?.kid
    let (order, current) = ring.withLock { ($0.order, $0.ring?.activeKID) }
    guard active != nil, records.map(\.kid) != order || active != current else { return false }
    try install(records)
    return true
  }

  private func install(_ records: [SigningKeyRecord]) throws {
    var published: [String: SigningKeyRing.Published] = [:]
    var active: (String, RSASigningKey)?
    for record in records {
      let publicKey = try RSAPublicKey(pem: record.certificatePEM)
      published[record.kid] = .init(
        kid: record.kid, publicKey: publicKey, certificatePEM: record.certificatePEM)
      if record.retiredAtMs == 0 {
        let der = try AESGCM.open(
          record.privateKeySealed, key: masterKey, associatedData: Array(record.kid.utf8))
        active = (record.kid, try RSASigningKey(pkcs8DER: der))
      }
    }
    guard let active else { throw CryptoError("signing keys", reason: "no active signing key") }
    let made = SigningKeyRing(activeKID: active.0, active: active.1, published: published)
    ring.withLock { $0 = (made, records.map(\.kid)) }
  }

  /// Signs claims with the active key, on the CPU pool; inside a call's admission scope
  /// the signature is admitted first (`Admission`, kind `.signing`). The job is
  /// submitted, not run: a call that ended (deadline, closed connection) while its
  /// signature waited for a thread is answered `DEADLINE_EXCEEDED` and signs nothing.
  public func sign(_ claims: [String: JSONValue]) async throws(RPCError) -> String {
    guard let current = ring.withLock({ $0.ring }) else {
      throw RPCError(.internalError, "no signing key loaded")
    }
    let ticket = try Admission.enter(.signing)
    defer { ticket?.leave() }
    do {
      return try await pool.submit { () throws(CryptoError) -> String in
        try JWT.sign(claims: claims, key: current.active, kid: current.activeKID)
      }
    } catch {
      switch error {
      case .refused(.cancelled):
        throw RPCError(.deadlineExceeded, "the call ended before its token was signed")
      case .refused(.queueFull):
        throw RPCError(
          .tooManyAttempts, "too many tokens being signed; try again later",
          details: ["retry_after_seconds": "1"])
      case .failed:
        throw RPCError(.internalError, "signing failed")
      }
    }
  }

  /// The JWKS JSON, the kid → PEM certificate map, and how long they may be cached.
  public func publicKeys() -> (jwks: String, certificates: [String: String], maxAge: Int64) {
    let (current, order) = ring.withLock { ($0.ring, $0.order) }
    guard let current else { return ("{\"keys\":[]}", [:], 0) }
    return (
      current.jwksJSON(order: order), current.published.mapValues(\.certificatePEM),
      Self.publicKeysMaxAgeSeconds
    )
  }

  /// Checks an ID token this server made for `projectID`: signature by a published key,
  /// issuer, audience, subject, and times.
  /// - Throws: `INVALID_ID_TOKEN` (malformed, bad signature, wrong project, unknown key)
  ///   or `TOKEN_EXPIRED`.
  public func verify(_ token: String, projectID: String) throws(RPCError) -> [String: JSONValue] {
    try verified(token, projectID: projectID).claims
  }

  /// `verify`, also giving the claims' JSON text as signed. This server wrote that text
  /// (the signature says so) with the same canonical encoder, so it equals encoding
  /// `claims` again, which VerifyIdToken would otherwise do on every call.
  public func verified(_ token: String, projectID: String) throws(RPCError) -> (
    claims: [String: JSONValue], claimsJSON: String
  ) {
    let decoded: DecodedJWT
    do {
      decoded = try JWT.decode(token)
    } catch {
      throw RPCError(.invalidIdToken, "the ID token is malformed")
    }
    guard decoded.algorithm == "RS256", let kid = decoded.keyID,
      let key = ring.withLock({ $0.ring?.published[kid] })
    else { throw RPCError(.invalidIdToken, "the ID token has no known key id") }
    guard decoded.verify(with: key.publicKey) else {
      throw RPCError(.invalidIdToken, "the ID token's signature is not valid")
    }
    let claims = decoded.claims
    guard claims["aud"]?.stringValue == projectID, claims["iss"]?.stringValue == issuerPrefix + projectID
    else {
      throw RPCError(.invalidIdToken, "the ID token belongs to another project")
    }
    guard let sub = claims["sub"]?.stringValue, !sub.isEmpty, sub.count <= 128,
      let iat = claims["iat"]?.int64Value, let exp = claims["exp"]?.int64Value
    else { throw RPCError(.invalidIdToken, "the ID token lacks sub, iat or exp") }
    let now = clock.nowSeconds()
    if iat > now + 300 { throw RPCError(.invalidIdToken, "the ID token was issued in the future") }
    if exp <= now { throw RPCError(.tokenExpired, "the ID token has expired") }
    return (claims, String(decoding: decoded.claimsJSON, as: UTF8.self))
  }
}
