import AnonAuthService
import AnonAuthWire

/// Methods that only `--test-hooks` registers, so integration tests can hold a call in
/// flight (deadlines, graceful shutdown) without a slow production method.
enum TestHooks {
  static let service = "anonauth.test.TestService"

  static func register(in router: inout Router) {
    // Sleep: waits `x-sleep-ms` (at most 60 s), cancellable, then answers like Check.
    router.unary(service, "Sleep") { (_: CheckRequest, context) throws(RPCError) in
      let ms = min(UInt64(context.metadata["x-sleep-ms"] ?? "") ?? 0, 60_000)
      do {
        try await Task.sleep(for: .milliseconds(ms))
      } catch {
        throw RPCError(code: .cancelled, reason: "CANCELLED", message: "cancelled")
      }
      var response = CheckResponse()
      response.status = "SLEPT"
      return response
    }
  }
}
