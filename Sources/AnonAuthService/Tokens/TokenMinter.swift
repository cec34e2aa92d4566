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
  /// How long verifiers may cache the published keys (`Cache-Control: max-age` on the
  /// JWKS, x509 and discovery documents).
  public static let publicKeysMaxAgeSeconds: Int64 = 300
  /// How long a rotated-in key is published before it signs: twice the cache lifetime,
  /// so that a verifier whose copy came through a shared cache (a CDN or proxy holding
  /// it up to max-age, then the verifier up to max-age again) holds the new key before
  /// the first token it signs. Google's securetoken keys are published ahead the same way.
  public static let publishAheadSeconds: Int64 = 2 * publicKeysMaxAgeSeconds

  private let store: Store
  private let clock: any ServiceClock
  private let masterKey: [UInt8]
  private let pool: CPUPool
  /// `--issuer-prefix`: `iss` is it and the project id when no public URL is set; tokens
  /// with such an `iss` keep verifying once one is (they were issued before).
  public let issuerPrefix: String
  /// `--public-url` (or, in `--dev`, the RPC port's address), set once the port is bound.
  private let publicURLSlot = Mutex<String?>(nil)
  /// The ring, the kids it was made from (oldest first) and their signing times, which
  /// `refresh` compares with the store's.
  private let ring = Mutex<(ring: SigningKeyRing?, order: [String], times: [[Int64]])>((nil, [], []))

  public init(store: Store, clock: any ServiceClock, masterKey: [UInt8], issuerPrefix: String, pool: CPUPool)
  {
    self.store = store
    self.clock = clock
    self.masterKey = masterKey
    self.issuerPrefix = issuerPrefix
    self.pool = pool
  }

  public var hasKeys: Bool { ring.withLock { $0.ring != nil } }

  /// The address each project's issuer is named under from now on (no trailing slash),
  /// or nil to keep `issuerPrefix`.
  public func setPublicURL(_ url: String?) { publicURLSlot.withLock { $0 = url } }

  /// `--public-url` as set, or nil.
  public var publicURL: String? { publicURLSlot.withLock { $0 } }

  /// What a new token's `iss` is: the project id after this prefix.
  public var currentIssuerPrefix: String { publicURL.map { $0 + "/" } ?? issuerPrefix }

  /// The issuer of `projectID`'s new tokens, as its discovery document names it.
  public func issuer(for projectID: String) -> String { currentIssuerPrefix + projectID }

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
      // No key has ever been published: nobody holds an old key set to miss it in.
      _ = try await rotate(aheadSeconds: 0)
    }
  }

  /// Makes a new key, published at once and signing `publishAheadSeconds` later, when
  /// the key that signs now is retired; that one stays published until its last token
  /// expires.
  /// - Returns: the new key's id.
  public func rotate() async throws -> String {
    try await rotate(aheadSeconds: Self.publishAheadSeconds)
  }

  private func rotate(aheadSeconds: Int64) async throws -> String {
    let masterKey = self.masterKey
    let now = clock.nowMs()
    let signsFrom = now + aheadSeconds * 1000
    let record: SigningKeyRecord = try await pool.run(.internalWork(.signingKeys)) {
      () throws(CryptoError) -> SigningKeyRecord in
      let key = try RSASigningKey.generate(bits: 2048)
      let kid = (try SecureRandom.bytes(20)).map { String(format: "%02x", $0) }.joined()
      let sealed = try AESGCM.seal(try key.pkcs8DER(), key: masterKey, associatedData: Array(kid.utf8))
      let certificate = try X509Certificate.selfSigned(
        for: key, commonName: "anonauth-signing-\(kid.prefix(8))",
        validFrom: Date(timeIntervalSince1970: Double(now) / 1000 - 86_400), validFor: 10 * 365 * 86_400)
      var record = SigningKeyRecord(
        kid: kid, privateKeySealed: sealed, certificatePEM: certificate, createdAtMs: now)
      record.signsFromMs = signsFrom
      return record
    }
    let publishUntil = signsFrom + Self.maxTTLSeconds * 1000 + ClockSkew.publishedKeyMs
    let records = try await store.write { db in
      try SigningKeysRepository.retireActive(db, atMs: signsFrom, publishUntilMs: publishUntil)
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
    let times = records.map { [$0.signsFromMs, $0.retiredAtMs] }
    let (order, current) = ring.withLock { ($0.order, $0.times) }
    guard records.contains(where: { $0.retiredAtMs == 0 }), records.map(\.kid) != order || times != current
    else { return false }
    try install(records)
    return true
  }

  /// Opens the private half of every key that signs now or is to sign later.
  private func install(_ records: [SigningKeyRecord]) throws {
    let now = clock.nowMs()
    var published: [String: SigningKeyRing.Published] = [:]
    var signers: [SigningKeyRing.Signer] = []
    for record in records {
      let publicKey = try RSAPublicKey(pem: record.certificatePEM)
      published[record.kid] = .init(
        kid: record.kid, publicKey: publicKey, certificatePEM: record.certificatePEM)
      if record.retiredAtMs == 0 || record.retiredAtMs > now {
        let der = try AESGCM.open(
          record.privateKeySealed, key: masterKey, associatedData: Array(record.kid.utf8))
        signers.append(
          .init(
            kid: record.kid, key: try RSASigningKey(pkcs8DER: der), fromMs: record.signsFromMs,
            untilMs: record.retiredAtMs))
      }
    }
    guard signers.contains(where: { $0.untilMs == 0 }) else {
      throw CryptoError("signing keys", reason: "no active signing key")
    }
    let made = SigningKeyRing(signers: signers, published: published)
    let times = records.map { [$0.signsFromMs, $0.retiredAtMs] }
    ring.withLock { $0 = (made, records.map(\.kid), times) }
  }

  /// Signs claims with the active key, on the CPU pool; the signature is admitted first
  /// as the call's `Admitted` says (`Admission`, kind `.signing`). The job is submitted,
  /// not run: a call that ended (deadline, closed connection) while its signature waited
  /// for a thread is answered `DEADLINE_EXCEEDED` and signs nothing.
  public func sign(_ claims: [String: JSONValue], _ admitted: Admitted) async throws(RPCError) -> String {
    guard let current = ring.withLock({ $0.ring })?.signer(atMs: clock.nowMs()) else {
      throw RPCError(.internalError, "no signing key loaded")
    }
    let ticket = try admitted.enter(.signing)
    defer { ticket?.leave() }
    do {
      return try await pool.submit(admitted) { () throws(CryptoError) -> String in
        try JWT.sign(claims: claims, key: current.key, kid: current.kid)
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

  /// Whether `iss` names `projectID`'s issuer under any address this server has had: the
  /// issuer prefix's form, or any public URL's (`https://.../<project>`). A token whose
  /// signature is one of this server's keys was issued by this server, so a token issued
  /// before `--public-url` was set or changed (a `--dev` daemon on port 0 changes it at
  /// each start) keeps verifying until it expires; `aud` still binds it to the project.
  func isIssuer(_ iss: String?, of projectID: String) -> Bool {
    guard let iss else { return false }
    return iss == issuerPrefix + projectID || (iss.hasPrefix("https://") && iss.hasSuffix("/" + projectID))
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
    guard claims["aud"]?.stringValue == projectID, isIssuer(claims["iss"]?.stringValue, of: projectID)
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
