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

/// The JSON API over HTTP/2 (`h2`) as a bench client: a call's method is the request's
/// path (with its query), its payload the body and its metadata the headers, sent as a
/// plain POST on a `GRPCClient`'s connection, several streams at once as native
/// multiplexes its calls.
struct HTTP2JSONClient: BenchClient {
  let connection: GRPCClient

  func callRaw(
    _ method: String, payload: [UInt8], metadata: [String: String], timeoutMs: UInt32?
  ) async throws(RPCError) -> [UInt8] {
    let headers = metadata.sorted { $0.key < $1.key }.map { (name: $0.key, value: $0.value) }
    return try await connection.post(path: method, headers: headers, body: payload, timeoutMs: timeoutMs)
  }

  func close() { connection.close() }
}

/// The transports a bench can compare in one run.
enum BenchTransport: String, CaseIterable, Sendable {
  case native, http, grpc
  /// The JSON API over HTTP/2 (ALPN `h2`): `--concurrency` streams on each connection.
  case http2

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
