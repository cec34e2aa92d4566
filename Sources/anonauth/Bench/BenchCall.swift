import AnonAuthWire

/// One call a bench makes, and what the bench learns from its answer (a refresh hands
/// back the rotated token for the next refresh of that family).
struct BenchCall: Sendable {
  let method: String
  let payload: [UInt8]
  let metadata: [String: String]
  /// A short name for the report's per-kind counts in a mixed bench.
  var kind = ""
  var onSuccess: (@Sendable ([UInt8]) -> Void)?
  var onFailure: (@Sendable () -> Void)?
}

/// Makes each call of a bench; nil ends the task that asked (its inputs ran out).
typealias BenchWorkload = @Sendable () -> BenchCall?
