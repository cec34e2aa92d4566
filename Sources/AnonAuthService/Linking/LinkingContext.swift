import AnonAuthCrypto
import AnonAuthWire
import Synchronization

/// The account-linking worker's shared state: the outbound HTTPS client, the providers'
/// key cache, the failed-sign-in throttle and the password hasher. One per environment.
public final class LinkingContext: Sendable {
  let outbound: any OutboundHTTP
  let jwks: JWKSCache
  let throttle: SignInThrottle
  let hasher: PasswordHasher
  /// A hash of a random password with the current parameters, checked against when an
  /// email is unknown, so that an unknown email costs what a wrong password costs.
  private let dummy = Mutex<String?>(nil)

  init(outbound: any OutboundHTTP, clock: any ServiceClock, throttle: SignInThrottle, hasher: PasswordHasher)
  {
    self.outbound = outbound
    self.jwks = JWKSCache(outbound: outbound, clock: clock)
    self.throttle = throttle
    self.hasher = hasher
  }

  func dummyHash(pool: CPUPool) async throws(RPCError) -> String {
    if let made = dummy.withLock({ $0 }) { return made }
    let hasher = self.hasher
    let made: String
    do {
      made = try await pool.run { () throws(CryptoError) -> String in
        try hasher.hash(SecureRandom.base64URL(byteCount: 16))
      }
    } catch {
      throw RPCError(.internalError, "password hashing failed")
    }
    return dummy.withLock { current in
      if let current { return current }
      current = made
      return made
    }
  }
}
