import AnonAuthService
import AnonAuthWire

/// Methods that only `--test-hooks` registers, so integration tests can hold a call in
/// flight (deadlines, graceful shutdown) without a slow production method.
enum TestHooks {
  static let service = "anonauth.test.TestService"

  static func register(in router: inout Router) {
    // Sleep: waits `x-sleep-ms` (at most 60 s), then answers like Check. Cancellable,
    // unless `x-sleep-uncancellable` is set: a handler stuck in work that does not notice
    // cancellation (a queued write, say), whose result comes after its deadline.
    router.unary(service, "Sleep") { (_: CheckRequest, context) throws(RPCError) in
      let ms = min(UInt64(context.metadata["x-sleep-ms"] ?? "") ?? 0, 60_000)
      if context.metadata["x-sleep-uncancellable"] != nil {
        await Task.detached { try? await Task.sleep(for: .milliseconds(ms)) }.value
      } else {
        do {
          try await Task.sleep(for: .milliseconds(ms))
        } catch {
          throw RPCError(.cancelled, "cancelled")
        }
      }
      var response = CheckResponse()
      response.status = "SLEPT"
      return response
    }
  }
}
