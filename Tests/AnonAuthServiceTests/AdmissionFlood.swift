import AnonAuthService
import AnonAuthWire
import Testing

/// One attacker's flood of calls, as the fair-admission tests play it: calls until one is
/// refused, then checks that the refusal is the per-address rate's.
enum AdmissionFlood {
  /// Calls `call(n)` for n = 0, 1, ... until it is refused (at most `limit` calls);
  /// returns how many were answered and the refusal.
  static func run(limit: Int = 50, _ call: (Int) async throws(RPCError) -> Void) async -> (Int, RPCError?) {
    for admitted in 0..<limit {
      do throws(RPCError) {
        try await call(admitted)
      } catch {
        return (admitted, error)
      }
    }
    return (limit, nil)
  }

  /// Floods with `call` (`run`), expects it limited (`expectLimited`) and the refusal
  /// counted once in `metrics` as the per-address rate's of `work`.
  static func expectLimited(
    _ metrics: ServiceMetrics, _ work: AdmissionWork, limit: Int = 50,
    sourceLocation: SourceLocation = #_sourceLocation, _ call: (Int) async throws(RPCError) -> Void
  ) async {
    expectLimited(await run(limit: limit, call), sourceLocation: sourceLocation)
    #expect(metrics.admissionRefusals(work, .ipRate) == 1, sourceLocation: sourceLocation)
  }

  /// The flood was limited to a rate of one a second after a burst of ten seconds' worth
  /// (the tests' clock does not move), and told when to come back.
  static func expectLimited(_ result: (Int, RPCError?), sourceLocation: SourceLocation = #_sourceLocation) {
    let (admitted, refusal) = result
    #expect(admitted == 10, sourceLocation: sourceLocation)
    #expect(
      refusal?.reason == Reason.tooManyAttempts.name, "\(String(describing: refusal))",
      sourceLocation: sourceLocation)
    #expect(refusal?.code == Reason.tooManyAttempts.code, sourceLocation: sourceLocation)
    #expect(refusal?.details["retry_after_seconds"] == "1", sourceLocation: sourceLocation)
  }
}
