import AnonAuthWire
import Synchronization

extension AccountService {
  /// The throttle key of the call's end-user IP (the one the sign-up quota counts), or
  /// nil when it cannot be told: password and identity-provider sign-ins share it.
  func throttleIPKey(_ context: CallContext, projectID: String) -> String? {
    env.ipPolicy.endUserIP(context, callerIsAdmin: env.callerIsAdmin(context))
      .flatMap(IPKey.make).map { SignInThrottle.ipKey(projectID: projectID, ip: $0) }
  }

  /// Reserves one attempt in `throttle`, or refuses the call before any work with
  /// `TOO_MANY_ATTEMPTS_TRY_LATER` and `retry_after_seconds`, counted in `refusals`.
  func reserveAttempt(
    _ throttle: SignInThrottle, account: String?, ip: String?, nowMs: Int64, refusals: borrowing Atomic<Int>,
    message: String
  ) throws(RPCError) {
    guard let wait = throttle.reserve(account: account, ip: ip, nowMs: nowMs) else { return }
    refusals.add(1, ordering: .relaxed)
    throw RPCError(.tooManyAttempts, message, details: ["retry_after_seconds": String(wait)])
  }
}
