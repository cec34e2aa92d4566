import AnonAuthCrypto
import AnonAuthNet
import AnonAuthRPCClient
import AnonAuthWire
import Foundation

/// One workload over several transports in the same run, in alternating rounds (each
/// transport `--seconds` per round, `--rounds` rounds), on connections opened and warmed
/// up beforehand, with the daemon's CPU read before and after each leg: whatever the
/// machine's other load does to one transport falls on the others too, so the ratio of
/// the daemon's CPU per call to the native one is fair. Native and gRPC send the same
/// path, message and metadata; HTTP/1.1 sends Firebase's JSON request.
enum TransportRounds {
  struct Plan {
    let name: String
    /// The issue's goal for CPU per call over another transport, as a multiple of native.
    let goalRatio: Double
    let transports: [BenchTransport]
    let workload: BenchWorkload
    /// The HTTP/1.1 request of the same work, for benches that have one.
    var http: (@Sendable () -> [UInt8])?
    /// The same work as a JSON API request over HTTP/2 (path, body, headers).
    var http2: BenchWorkload?
  }

  /// The figures of one transport summed over the rounds.
  private struct Totals {
    let recorder = LatencyRecorder()
    var wall = 0.0
    var cpu: Double? = 0
    var calls = 0
  }

  /// `--connections` × `--concurrency` calls in flight on each transport: native and
  /// gRPC multiplex `--concurrency` calls on each of `--connections` connections;
  /// HTTP/1.1 opens one connection per call in flight.
  static func run(_ arguments: Arguments, _ base: Connection, _ plan: Plan) async throws(CLIError) {
    guard arguments["rate"] == nil else {
      throw .usage("--rate is for one native leg: the transport comparison runs closed loop")
    }
    let transports = plan.transports
    let options = try LoadRunner.options(arguments, defaultConnections: 64, defaultConcurrency: 4)
    let roundCount = try BenchCommand.int(arguments, "rounds", transports.count > 1 ? 3 : 1)
    let endpoint = base.client.endpoint
    let timeoutMs = Int(ProtocolDefaults.callTimeoutMs)
    let native: [any BenchClient] =
      transports.contains(.native) ? try await LoadRunner.connect(base, count: options.connections) : []
    let grpc: [any BenchClient] =
      transports.contains(.grpc) ? try await LoadRunner.connectGRPC(base, count: options.connections) : []
    let http2: [any BenchClient] =
      transports.contains(.http2) && plan.http2 != nil
      ? try await LoadRunner.connectGRPC(base, count: options.connections).map {
        HTTP2JSONClient(connection: $0)
      }
      : []
    var fleet: HTTPFleet?
    if transports.contains(.http), let http = plan.http {
      let context: TLSContext
      do {
        context = try TLSContext.client(
          caFile: endpoint.caFile, insecure: endpoint.insecure,
          applicationProtocol: HTTPKeepAlive.applicationProtocol)
      } catch {
        throw .usage("TLS set-up: \(error)")
      }
      fleet = try await HTTPFleet(
        .init(host: endpoint.host, port: endpoint.port, context: context, timeoutMs: timeoutMs),
        count: options.connections * options.concurrency, request: http,
        failureReason: HTTPSignUpRequest.failureReason)
    }
    defer {
      fleet?.close()
      for client in native + grpc + http2 { client.close() }
    }
    let knowsOps = arguments["ops"] != nil || base.file["ops"] != nil
    let rsa = knowsOps ? try ServerCost.rsaSignsPerSecond(arguments) : nil
    /// One leg: `transport` for `seconds`, its calls recorded in `recorder`; the wall time.
    func leg(_ transport: BenchTransport, seconds: Int, _ recorder: LatencyRecorder) async -> Double {
      var legOptions = options
      legOptions.seconds = seconds
      switch transport {
      case .native:
        return await LoadRunner.run(legOptions, clients: native, workload: plan.workload, recorder: recorder)
      case .grpc:
        return await LoadRunner.run(legOptions, clients: grpc, workload: plan.workload, recorder: recorder)
      case .http:
        return await fleet?.run(seconds: seconds, recorder: recorder) ?? 0
      case .http2:
        guard let workload = plan.http2 else { return 0 }
        return await LoadRunner.run(legOptions, clients: http2, workload: workload, recorder: recorder)
      }
    }
    // `--warm-up S`: each transport runs S seconds, unmeasured, before the first round, so
    // that what a fresh daemon pays once (its heap and caches growing, the store's first
    // pages and checkpoints) falls on neither transport's first leg.
    let warmUp = try BenchCommand.int(arguments, "warm-up", 0)
    if warmUp > 0 {
      for transport in transports { _ = await leg(transport, seconds: warmUp, LatencyRecorder()) }
    }
    var totals: [BenchTransport: Totals] = [:]
    var ratios: [BenchTransport: [Double]] = [:]
    for _ in 0..<roundCount {
      var perCall: [BenchTransport: Double] = [:]
      for transport in transports {
        var total = totals[transport] ?? Totals()
        let before = total.recorder.summary()
        let cost = ServerCost(arguments, base)
        total.wall += await leg(transport, seconds: options.seconds, total.recorder)
        let after = total.recorder.summary()
        let calls = after.count + after.failureCount - before.count - before.failureCount
        let spent = cost.cpuSpent()
        total.cpu = total.cpu.flatMap { sum in spent.map { sum + $0 } }
        total.calls += calls
        if let spent, calls > 0 { perCall[transport] = spent / Double(calls) }
        totals[transport] = total
      }
      if let base = perCall[.native], base > 0 {
        for transport in transports where transport != .native {
          if let other = perCall[transport] { ratios[transport, default: []].append(other / base) }
        }
      }
    }
    report(arguments, plan, options, totals, ratios: ratios, reconnects: fleet?.reconnects ?? 0, rsa: rsa)
    let failed = totals.values.map { $0.recorder.summary().failureCount }.reduce(0, +)
    if failed > 0, !arguments.has("allow-failures") {
      let first = totals.values.compactMap { $0.recorder.firstFailureReason }.first ?? "?"
      throw .failed("\(failed) calls failed; the first: \(first)")
    }
  }

  private static func report(
    _ arguments: Arguments, _ plan: Plan, _ options: LoadRunner.Options, _ totals: [BenchTransport: Totals],
    ratios: [BenchTransport: [Double]], reconnects: Int, rsa: (rate: Double, source: String)?
  ) {
    var reports: [BenchTransport: BenchReport] = [:]
    for transport in plan.transports {
      guard let total = totals[transport] else { continue }
      var shape = options
      if transport == .http {
        shape.connections = options.connections * options.concurrency
        shape.concurrency = 1
      }
      reports[transport] = BenchReport(
        name: "\(plan.name) \(transport.rawValue)", options: shape, wall: total.wall,
        summary: total.recorder.summary(), serverCPU: total.cpu, rsa: rsa)
    }
    /// The ratio over all rounds: each transport's summed CPU per call over native's.
    func ratio(_ transport: BenchTransport) -> Double? {
      reports[transport]?.cpuPerCallMicros.flatMap { other in
        reports[.native]?.cpuPerCallMicros.map { other / $0 }
      }
    }
    let compared = plan.transports.filter { $0 != .native && plan.transports.contains(.native) }
    if arguments.has("json") {
      var object: [String: JSONValue] = [
        "bench": .string(plan.name), "protocol": .string(arguments["protocol"] ?? "native"),
        "rounds": .int(Int64(max(1, ratios.values.map(\.count).max() ?? 0))),
        "goal_ratio": .double(plan.goalRatio),
        "warm_up_seconds": .int(Int64(arguments["warm-up"].flatMap { Int($0) } ?? 0)),
      ]
      if plan.transports.contains(.http) { object["http_reconnects"] = .int(Int64(reconnects)) }
      for (transport, report) in reports { object[transport.rawValue] = .object(report.jsonObject) }
      for transport in compared {
        guard let value = ratio(transport) else { continue }
        let byRound = JSONValue.array((ratios[transport] ?? []).map { .double(round($0 * 1000) / 1000) })
        object["cpu_ratio_\(transport.rawValue)_native"] = .double(round(value * 1000) / 1000)
        object["cpu_ratio_\(transport.rawValue)_native_by_round"] = byRound
        // The name the HTTP comparison had before gRPC, kept for its readers.
        if transport == .http { object["cpu_ratio_by_round"] = byRound }
      }
      print(JSONValue.object(object).jsonText)
      return
    }
    for transport in plan.transports { reports[transport]?.printText() }
    if plan.transports.contains(.http) { print("  http reconnects during rounds: \(reconnects)") }
    for transport in compared {
      guard let value = ratio(transport) else { continue }
      let byRound = (ratios[transport] ?? []).map { String(format: "%.3f", $0) }.joined(separator: ", ")
      let verdict = value <= plan.goalRatio ? "within" : "OVER"
      print(
        "server CPU per call, \(transport.rawValue) / native: \(String(format: "%.3f", value))x"
          + " (\(verdict) the \(plan.goalRatio)x goal; by round: \(byRound))")
    }
  }
}
