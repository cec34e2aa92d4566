import AnonAuthCrypto
import AnonAuthWire
import Synchronization

/// The account-linking worker's shared state: the outbound HTTPS client, the providers'
/// key cache, the failed-sign-in throttles and the password hasher. One per environment.
public final class LinkingContext: Sendable {
  /// Outbound HTTPS behind a per-provider (per-host) concurrency bound: reached only
  /// with an `Admitted` (`outbound(_:)`), as are the provider keys it fetches (`jwks(_:)`).
  private let outboundClient: any OutboundHTTP
  private let jwksCache: JWKSCache
  let throttle: SignInThrottle
  /// Failed identity-provider sign-ins and links per end-user IP.
  let idpThrottle: SignInThrottle
  /// Facebook tokens the Graph API refused, for a minute.
  let facebookRejections: RejectedTokenCache
  let hasher: PasswordHasher
  /// Accounts with a password link in flight (see `AccountLinker.linkPassword`).
  let passwordLinks = InFlightKeys()

  /// 30 failed identity-provider sign-ins or links per IP within 10 minutes.
  static let defaultIdpLimit = SignInThrottle.Limit(maxFailures: 30, windowMs: 600_000)
  /// A hash of a random password with the current parameters, checked against when an
  /// email is unknown, so that an unknown email costs what a wrong password costs.
  private let dummy = Mutex<String?>(nil)

  init(
    outbound: any OutboundHTTP, clock: any ServiceClock, throttle: SignInThrottle, hasher: PasswordHasher,
    idpThrottle: SignInThrottle = SignInThrottle(ipLimit: LinkingContext.defaultIdpLimit),
    providerGate: ProviderGate = ProviderGate()
  ) {
    let gated = GatedOutbound(inner: outbound, gate: providerGate)
    self.outboundClient = gated
    self.jwksCache = JWKSCache(outbound: gated, clock: clock)
    self.throttle = throttle
    self.idpThrottle = idpThrottle
    self.facebookRejections = RejectedTokenCache()
    self.hasher = hasher
  }

  /// The outbound client, for a call (or internal work) that was admitted.
  func outbound(_ admitted: Admitted) -> any OutboundHTTP { outboundClient }

  /// The providers' key cache (whose misses are outbound calls), for admitted work.
  func jwks(_ admitted: Admitted) -> JWKSCache { jwksCache }

  func dummyHash(pool: CPUPool, _ admitted: Admitted) async throws(RPCError) -> String {
    if let made = dummy.withLock({ $0 }) { return made }
    let hasher = self.hasher
    let made: String
    do {
      made = try await pool.run(admitted) { () throws(CryptoError) -> String in
        try hasher.hash(SecureRandom.base64URL(byteCount: 16))
      }
    } catch {
      throw RPCError(.internalError, "password hashing failed")
    }
    // Made once per process, so it may bypass the queue bound (`run`).
    return dummy.withLock { current in
      if let current { return current }
      current = made
      return made
    }
  }
}
