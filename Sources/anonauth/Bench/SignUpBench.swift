import AnonAuthCrypto
import AnonAuthNet
import AnonAuthWire
import Foundation

/// `anonauth bench signup [--protocol native|http|grpc|both|native,grpc,...]`: an
/// anonymous sign-up over the native transport, over HTTPS/JSON as Firebase's SDKs send
/// it, over gRPC (HTTP/2), or several in the same run in alternating rounds
/// (`TransportRounds`), so that the ratio of the daemon's CPU per call is fair.
enum SignUpBench {
  /// The goal for the daemon's CPU per sign-up over HTTPS/JSON or gRPC, as a
  /// multiple of the native one; the report says whether the run met it.
  static let goalRatio = 1.15

  static func run(_ arguments: Arguments) async throws(CLIError) {
    let transports = try BenchTransport.parse(
      arguments["protocol"], allowed: [.native, .http, .grpc, .http2])
    if transports == [.native] {
      try await native(arguments)
      return
    }
    let base = try Connection(arguments)
    let keys = try BenchCommand.Keys(arguments, base)
    let counter = BenchCommand.Counter()
    let endpoint = base.client.endpoint
    let http = HTTPSignUpRequest(
      authority: endpoint.host.contains(":")
        ? "[\(endpoint.host)]:\(endpoint.port)" : "\(endpoint.host):\(endpoint.port)",
      apiKey: keys.apiKey, adminKey: keys.adminKey)
    try await TransportRounds.run(
      arguments, base,
      .init(
        name: "signup", goalRatio: goalRatio, transports: transports, workload: nativeWorkload(keys, counter),
        http: { http.bytes(ip: counter.next()) }, http2: { http.call(ip: counter.next()) }))
  }

  /// The native bench as it always was: closed or open loop, one measurement.
  private static func native(_ arguments: Arguments) async throws(CLIError) {
    let base = try Connection(arguments)
    let keys = try BenchCommand.Keys(arguments, base)
    let workload: BenchWorkload
    if let address = arguments["end-user-ip"] {
      // Every sign-up from one address: its quota window is read on each, whatever it holds.
      workload = oneAddressWorkload(keys, address)
    } else {
      workload = nativeWorkload(keys, BenchCommand.Counter())
    }
    try await BenchCommand.measure(arguments, name: "signup", defaultConcurrency: 4, workload: workload)
  }

  private static var payload: [UInt8] {
    var request = SignUpRequest()
    request.kind = .anonymous(AnonymousSignUp())
    return request.serializedBytes()
  }

  private static func nativeWorkload(_ keys: BenchCommand.Keys, _ counter: BenchCommand.Counter)
    -> BenchWorkload
  {
    let payload = payload
    return {
      BenchCall(
        method: AccountServiceMethods.signUp.path, payload: payload,
        metadata: keys.signUpMetadata(ip: counter.next()))
    }
  }

  private static func oneAddressWorkload(_ keys: BenchCommand.Keys, _ address: String) -> BenchWorkload {
    let payload = payload
    let metadata = [
      "x-api-key": keys.apiKey, "authorization": "Bearer \(keys.adminKey)", "x-end-user-ip": address,
    ]
    return { BenchCall(method: AccountServiceMethods.signUp.path, payload: payload, metadata: metadata) }
  }
}
