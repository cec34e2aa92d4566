import AnonAuthCrypto
import AnonAuthStore
import AnonAuthWire

/// scrypt on the password pool: hashing and checking passwords is slow on purpose, so it
/// never runs on the cooperative pool, and it has threads of its own so token signing
/// never waits behind it. The pool's queue is bounded: when it is full the call is
/// refused with `TOO_MANY_ATTEMPTS_TRY_LATER` (`retry_after_seconds` 1) at once, and a
/// job whose call is gone (cancelled, timed out) is dropped before it runs. Each hash or
/// check takes the call's `Admitted` and is admitted first (`Admission`, kind
/// `.password`): per IP and per project, successes counted as much as failures.
extension ServiceEnvironment {
  /// A PHC string for `password` with the current parameters.
  func hashPassword(_ password: String, _ admitted: Admitted) async throws(RPCError) -> String {
    let hasher = linking.hasher
    let ticket = try admitted.enter(.password)
    defer { ticket?.leave() }
    do {
      return try await passwordPool.submit(admitted) { () throws(CryptoError) -> String in
        try hasher.hash(password)
      }
    } catch {
      throw passwordFailure(error)
    }
  }

  /// `hashPassword` for a call that took a place in the sign-up quota at `admittedAtMs`:
  /// when the hash is not carried out (the password pool was full, or the call ended),
  /// the place goes back, so a client that retries as told does not spend its quota.
  func hashPassword(
    _ password: String, _ admitted: Admitted, refundingQuotaOf projectID: String, ipKey: String,
    atMs admittedAtMs: Int64
  ) async throws(RPCError) -> String {
    do {
      return try await hashPassword(password, admitted)
    } catch {
      // Detached: a cancelled call's own task could not write any more.
      Task.detached { [self] in
        try? await write(.internalWork(.quotaRefund)) { db in
          try QuotaRepository.forget(db, projectID: projectID, ipKey: ipKey, atMs: admittedAtMs)
        }
      }
      throw error
    }
  }

  /// Checks `password` against `stored`; with no stored hash it checks against a dummy
  /// one, which never matches but costs the same.
  func verifyPassword(_ password: String, against stored: String?, _ admitted: Admitted)
    async throws(RPCError) -> PasswordHasher.Verification
  {
    let hasher = linking.hasher
    let ticket = try admitted.enter(.password)
    defer { ticket?.leave() }
    let target: String
    if let stored {
      target = stored
    } else {
      target = try await linking.dummyHash(pool: passwordPool, admitted)
    }
    let result: PasswordHasher.Verification
    do {
      result = try await passwordPool.submit(admitted) { () throws(Never) -> PasswordHasher.Verification in
        hasher.verify(password, against: target)
      }
    } catch {
      throw passwordFailure(error)
    }
    return stored == nil ? .init(matches: false, needsRehash: false) : result
  }

  /// The documented answer for a password job that did not complete.
  func passwordFailure<E>(_ outcome: CPUPool.Outcome<E>) -> RPCError {
    switch outcome {
    case .refused(.queueFull):
      metrics.passwordPoolRefusals.add(1, ordering: .relaxed)
      return RPCError(
        .tooManyAttempts, "too many password checks in progress; try again later",
        details: ["retry_after_seconds": "1"])
    case .refused(.cancelled):
      return RPCError(.deadlineExceeded, "the call ended before its password check ran")
    case .failed(let error):
      logger.error("password hashing failed", ["error": .string("\(error)")])
      return RPCError(.internalError, "password hashing failed")
    }
  }
}
