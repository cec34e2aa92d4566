import AnonAuthCrypto
import AnonAuthNet
import AnonAuthWire
import Foundation

/// `anonauth bench signup [--protocol native|http|both]`: an anonymous sign-up over the
/// native transport, over HTTPS/JSON as Firebase's SDKs send it, or both in the same run,
/// in alternating rounds, so that what the machine's other load does to one falls on the
/// other too and the ratio of the daemon's CPU per call is fair.
enum SignUpBench {
  enum Transport: String, CaseIterable {
    case native, http
  }

  /// The issue's goal for the daemon's CPU per HTTPS/JSON sign-up, as a multiple of the
  /// native one; the report says whether the run met it.
  static let goalRatio = 1.15

  static func run(_ arguments: Arguments) async throws(CLIError) {
    let transports: [Transport]
    switch arguments["protocol"] ?? "native" {
    case "native": transports = [.native]
    case "http": transports = [.http]
    case "both": transports = [.native, .http]
    case let other: throw .usage("--protocol expects native, http or both, not \(other)")
    }
    if transports == [.native] {
      try await native(arguments)
    } else {
      guard arguments["rate"] == nil else {
        throw .usage("--rate is native only: an HTTP/1.1 connection has one call in flight")
      }
      try await rounds(arguments, transports)
    }
  }

  /// The native bench as it always was: closed or open loop, one measurement.
  private static func native(_ arguments: Arguments) async throws(CLIError) {
    let base = try Connection(arguments)
    let keys = try BenchCommand.Keys(arguments, base)
    let workload = nativeWorkload(keys, BenchCommand.Counter())
    try await BenchCommand.measure(arguments, name: "signup", defaultConcurrency: 4, workload: workload)
  }

  private static func nativeWorkload(_ keys: BenchCommand.Keys, _ counter: BenchCommand.Counter)
    -> BenchWorkload
  {
    var request = SignUpRequest()
    request.kind = .anonymous(AnonymousSignUp())
    let payload = request.serializedBytes()
    return {
      BenchCall(
        method: AccountServiceMethods.signUp.path, payload: payload,
        metadata: keys.signUpMetadata(ip: counter.next()))
    }
  }

  /// The figures of one transport summed over the rounds.
  private struct Totals {
    let recorder = LatencyRecorder()
    var wall = 0.0
    var cpu: Double? = 0
    var calls = 0
  }

  /// Runs each transport `--seconds` per round for `--rounds` rounds (default 3 with
  /// both, else 1), one after the other on connections opened and warmed up beforehand:
  /// `--connections` × `--concurrency` calls in flight on each transport (native: that
  /// many multiplexed calls on `--connections` connections; HTTP/1.1: one connection per
  /// call in flight).
  private static func rounds(_ arguments: Arguments, _ transports: [Transport]) async throws(CLIError) {
    let options = try LoadRunner.options(arguments, defaultConnections: 64, defaultConcurrency: 4)
    let roundCount = try BenchCommand.int(arguments, "rounds", transports.count > 1 ? 3 : 1)
    let base = try Connection(arguments)
    let keys = try BenchCommand.Keys(arguments, base)
    let counter = BenchCommand.Counter()
    let endpoint = base.client.endpoint
    let http = HTTPSignUpRequest(
      authority: endpoint.host.contains(":")
        ? "[\(endpoint.host)]:\(endpoint.port)" : "\(endpoint.host):\(endpoint.port)",
      apiKey: keys.apiKey, adminKey: keys.adminKey)
    let context: TLSContext
    do {
      context = try TLSContext.client(
        caFile: endpoint.caFile, insecure: endpoint.insecure,
        applicationProtocol: KeepAliveHTTPSConnection.applicationProtocol)
    } catch {
      throw .usage("TLS set-up: \(error)")
    }
    let timeoutMs = Int(ProtocolDefaults.callTimeoutMs)
    let clients =
      transports.contains(.native) ? try await LoadRunner.connect(base, count: options.connections) : []
    let fleet = try await HTTPFleet(
      .init(host: endpoint.host, port: endpoint.port, context: context, timeoutMs: timeoutMs),
      count: options.connections * options.concurrency,
      request: { http.bytes(ip: counter.next()) }, failureReason: HTTPSignUpRequest.failureReason)
    defer {
      fleet.close()
      for client in clients { client.close() }
    }
    let knowsOps = arguments["ops"] != nil || base.file["ops"] != nil
    let rsa = knowsOps ? try ServerCost.rsaSignsPerSecond(arguments) : nil
    var totals: [Transport: Totals] = [:]
    var ratios: [Double] = []
    let workload = nativeWorkload(keys, counter)
    for _ in 0..<roundCount {
      var perCall: [Transport: Double] = [:]
      for transport in transports {
        var total = totals[transport] ?? Totals()
        let before = total.recorder.summary()
        let cost = ServerCost(arguments, base)
        switch transport {
        case .native:
          total.wall += await LoadRunner.run(
            options, clients: clients, workload: workload, recorder: total.recorder)
        case .http:
          total.wall += await fleet.run(seconds: options.seconds, recorder: total.recorder)
        }
        let after = total.recorder.summary()
        let calls = after.count + after.failureCount - before.count - before.failureCount
        let spent = cost.cpuSpent()
        total.cpu = total.cpu.flatMap { sum in spent.map { sum + $0 } }
        total.calls += calls
        if let spent, calls > 0 { perCall[transport] = spent / Double(calls) }
        totals[transport] = total
      }
      if let native = perCall[.native], let overHTTP = perCall[.http], native > 0 {
        ratios.append(overHTTP / native)
      }
    }
    report(arguments, options, transports, totals, ratios: ratios, reconnects: fleet.reconnects, rsa: rsa)
    let failed = totals.values.map { $0.recorder.summary().failureCount }.reduce(0, +)
    if failed > 0, !arguments.has("allow-failures") {
      let first = totals.values.compactMap { $0.recorder.firstFailureReason }.first ?? "?"
      throw .failed("\(failed) calls failed; the first: \(first)")
    }
  }

  private static func report(
    _ arguments: Arguments, _ options: LoadRunner.Options, _ transports: [Transport],
    _ totals: [Transport: Totals], ratios: [Double], reconnects: Int, rsa: (rate: Double, source: String)?
  ) {
    var reports: [Transport: BenchReport] = [:]
    for transport in transports {
      guard let total = totals[transport] else { continue }
      var shape = options
      if transport == .http {
        shape.connections = options.connections * options.concurrency
        shape.concurrency = 1
      }
      reports[transport] = BenchReport(
        name: "signup \(transport.rawValue)", options: shape, wall: total.wall,
        summary: total.recorder.summary(), serverCPU: total.cpu, rsa: rsa)
    }
    let ratio = reports[.http]?.cpuPerCallMicros.flatMap { overHTTP in
      reports[.native]?.cpuPerCallMicros.map { overHTTP / $0 }
    }
    if arguments.has("json") {
      var object: [String: JSONValue] = [
        "bench": .string("signup"), "protocol": .string(arguments["protocol"] ?? "native"),
        "rounds": .int(Int64(max(1, ratios.count))), "http_reconnects": .int(Int64(reconnects)),
      ]
      for (transport, report) in reports { object[transport.rawValue] = .object(report.jsonObject) }
      if let ratio {
        object["cpu_ratio_http_native"] = .double(round(ratio * 1000) / 1000)
        object["cpu_ratio_by_round"] = .array(ratios.map { .double(round($0 * 1000) / 1000) })
      }
      print(JSONValue.object(object).jsonText)
      return
    }
    for transport in transports { reports[transport]?.printText() }
    if transports.contains(.http) { print("  http reconnects during rounds: \(reconnects)") }
    if let ratio {
      let byRound = ratios.map { String(format: "%.3f", $0) }.joined(separator: ", ")
      let verdict = ratio <= goalRatio ? "within" : "OVER"
      print(
        "server CPU per call, http / native: \(String(format: "%.3f", ratio))x"
          + " (\(verdict) the \(goalRatio)x goal; by round: \(byRound))")
    }
  }
}
