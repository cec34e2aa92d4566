import AnonAuthCrypto
import AnonAuthWire

/// scrypt on the CPU pool: hashing and checking passwords is slow on purpose, so it never
/// runs on the cooperative pool, and it shares the pool's threads (sized to the cores)
/// with token signing.
extension ServiceEnvironment {
  /// A PHC string for `password` with the current parameters.
  func hashPassword(_ password: String) async throws(RPCError) -> String {
    let hasher = linking.hasher
    do {
      return try await cpuPool.run { () throws(CryptoError) -> String in try hasher.hash(password) }
    } catch {
      logger.error("password hashing failed", ["error": .string("\(error)")])
      throw RPCError(.internalError, "password hashing failed")
    }
  }

  /// Checks `password` against `stored`; with no stored hash it checks against a dummy
  /// one, which never matches but costs the same.
  func verifyPassword(_ password: String, against stored: String?) async throws(RPCError)
    -> PasswordHasher.Verification
  {
    let hasher = linking.hasher
    let target: String
    if let stored {
      target = stored
    } else {
      target = try await linking.dummyHash(pool: cpuPool)
    }
    let result = await cpuPool.run { hasher.verify(password, against: target) }
    return stored == nil ? .init(matches: false, needsRehash: false) : result
  }
}
