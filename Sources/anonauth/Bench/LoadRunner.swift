import AnonAuthRPCClient
import AnonAuthWire

/// Drives a workload over many connections, closed loop (each task waits for its answer,
/// for throughput) or open loop (`--rate`: calls leave on a fixed schedule whatever the
/// answers do, and latency counts from the scheduled time, so a stall is not hidden by
/// the calls it kept from being sent, as wrk2 measures).
enum LoadRunner {
  struct Options {
    var connections: Int
    var concurrency: Int
    var seconds: Int
    /// Calls per second on schedule; nil: closed loop.
    var rate: Int?

    var shape: String {
      if let rate { return "open loop, \(rate) calls/s scheduled on \(connections) connections" }
      return "\(connections) connections x \(concurrency) in flight"
    }
  }

  static func options(
    _ arguments: Arguments, defaultConnections: Int, defaultConcurrency: Int
  ) throws(CLIError) -> Options {
    Options(
      connections: try BenchCommand.int(arguments, "connections", defaultConnections),
      concurrency: try BenchCommand.int(arguments, "concurrency", defaultConcurrency),
      seconds: try BenchCommand.int(arguments, "seconds", 10),
      rate: arguments["rate"] == nil ? nil : try BenchCommand.int(arguments, "rate", 1))
  }

  /// Opens the connections and finishes their TLS handshakes before any timing.
  static func connect(_ base: Connection, count: Int) async throws(CLIError) -> [RPCClient] {
    try await open(count) { () throws(RPCClientError) in
      try RPCClient(endpoint: base.client.endpoint, defaultTimeoutMs: ProtocolDefaults.callTimeoutMs)
    }
  }

  /// The same over gRPC: `count` HTTP/2 connections, each warmed up by one call.
  static func connectGRPC(_ base: Connection, count: Int) async throws(CLIError) -> [GRPCClient] {
    try await open(count) { () throws(RPCClientError) in
      try GRPCClient(endpoint: base.client.endpoint, defaultTimeoutMs: ProtocolDefaults.callTimeoutMs)
    }
  }

  /// `count` clients made by `make`, each warmed up by one call.
  private static func open<Client: BenchClient>(
    _ count: Int, _ make: () throws(RPCClientError) -> Client
  ) async throws(CLIError) -> [Client] {
    var clients: [Client] = []
    for _ in 0..<count {
      do {
        clients.append(try make())
      } catch {
        throw .usage(error.description)
      }
    }
    try await warmUp(clients)
    return clients
  }

  private static func warmUp(_ clients: [any BenchClient]) async throws(CLIError) {
    let warmUp = CheckRequest().serializedBytes()
    for client in clients {
      do {
        _ = try await client.callRaw(
          HealthServiceMethods.check.path, payload: warmUp, metadata: [:], timeoutMs: nil)
      } catch {
        throw .failed("warm-up call failed: \(error)")
      }
    }
  }

  /// Runs until `seconds` have passed or the workload runs out; returns the wall time.
  static func run(
    _ options: Options, clients: [any BenchClient], workload: @escaping BenchWorkload,
    recorder: LatencyRecorder
  ) async -> Double {
    let clock = ContinuousClock()
    let started = clock.now
    if let rate = options.rate {
      await openLoop(
        rate: rate, seconds: options.seconds, clients: clients, workload: workload, recorder: recorder)
    } else {
      await closedLoop(options, clients: clients, workload: workload, recorder: recorder)
    }
    return seconds(clock.now - started)
  }

  static func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
  }

  static func nanos(_ duration: Duration) -> UInt64 {
    UInt64(max(0, duration.components.seconds)) * 1_000_000_000
      + UInt64(max(0, duration.components.attoseconds / 1_000_000_000))
  }

  private static func closedLoop(
    _ options: Options, clients: [any BenchClient], workload: @escaping BenchWorkload,
    recorder: LatencyRecorder
  ) async {
    let clock = ContinuousClock()
    let end = clock.now + .seconds(options.seconds)
    await withTaskGroup(of: Void.self) { group in
      for client in clients {
        for _ in 0..<options.concurrency {
          group.addTask {
            while clock.now < end {
              guard let call = workload() else { return }
              await perform(call, on: client, from: clock.now, recorder: recorder)
            }
          }
        }
      }
    }
  }

  /// Wakes every millisecond and sends every call whose time has come, each timed from
  /// its scheduled instant. Calls more than `rate` × 10 s behind are not sent but counted
  /// as `CLIENT_BEHIND` failures: the machine running the bench is the limit then.
  private static func openLoop(
    rate: Int, seconds: Int, clients: [any BenchClient], workload: @escaping BenchWorkload,
    recorder: LatencyRecorder
  ) async {
    let clock = ContinuousClock()
    let start = clock.now
    let total = rate * seconds
    let interval = Duration.nanoseconds(1_000_000_000 / Int64(rate))
    let inFlight = BenchCommand.Counter()
    let maxInFlight = rate * 10
    await withTaskGroup(of: Void.self) { group in
      var index = 0
      scheduling: while index < total {
        let now = clock.now
        while index < total {
          let scheduled = start + interval * index
          if scheduled > now { break }
          guard let call = workload() else { break scheduling }
          let client = clients[index % clients.count]
          index += 1
          if inFlight.next() > maxInFlight {
            inFlight.add(-1)
            recorder.fail(reason: "CLIENT_BEHIND", detail: "the bench could not keep up with --rate")
            continue
          }
          group.addTask {
            await perform(call, on: client, from: scheduled, recorder: recorder)
            inFlight.add(-1)
          }
        }
        try? await Task.sleep(for: .milliseconds(1))
      }
    }
  }

  private static func perform(
    _ call: BenchCall, on client: any BenchClient, from start: ContinuousClock.Instant,
    recorder: LatencyRecorder
  ) async {
    do {
      let reply = try await client.callRaw(
        call.method, payload: call.payload, metadata: call.metadata, timeoutMs: nil)
      recorder.record(nanos: nanos(ContinuousClock.now - start), kind: call.kind)
      call.onSuccess?(reply)
    } catch {
      recorder.fail(reason: error.reason, detail: "\(call.method): \(error.reason): \(error.message)")
      call.onFailure?()
    }
  }
}
