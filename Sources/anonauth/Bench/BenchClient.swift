import AnonAuthRPCClient
import AnonAuthWire

/// What the load runner needs of a client: a raw call and a close. The native
/// `RPCClient` and the `GRPCClient` both are one, so a bench drives either transport with
/// the same workload (same path, message and metadata) and the same task layout.
protocol BenchClient: Sendable {
  func callRaw(
    _ method: String, payload: [UInt8], metadata: [String: String], timeoutMs: UInt32?
  ) async throws(RPCError) -> [UInt8]
  func close()
}

extension RPCClient: BenchClient {}
extension GRPCClient: BenchClient {}

/// The transports a bench can compare in one run.
enum BenchTransport: String, CaseIterable, Sendable {
  case native, http, grpc

  /// `--protocol`: one name, a comma-separated list (`native,grpc`), or `both` (native and
  /// http, as before gRPC existed). The order given is the order of each round's legs.
  static func parse(_ text: String?, allowed: [BenchTransport]) throws(CLIError) -> [BenchTransport] {
    let names = text ?? "native"
    var transports: [BenchTransport] = []
    for name in names == "both" ? ["native", "http"] : names.split(separator: ",").map(String.init) {
      guard let transport = BenchTransport(rawValue: name), allowed.contains(transport) else {
        let choices = allowed.map(\.rawValue).joined(separator: ", ")
        throw .usage("--protocol expects \(choices) or a comma-separated list of them, not \(name)")
      }
      if !transports.contains(transport) { transports.append(transport) }
    }
    guard !transports.isEmpty else { throw .usage("--protocol names no transport") }
    return transports
  }
}
