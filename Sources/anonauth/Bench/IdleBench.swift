import AnonAuthCrypto
import AnonAuthRPCClient
import AnonAuthWire

/// `anonauth bench idle [--protocol native|grpc|native,grpc]`: what an idle connection
/// costs the daemon in resident memory. Each transport's `--connections` are opened (one
/// health check each: TLS, and for gRPC the HTTP/2 preface and SETTINGS, done) and held;
/// with several transports each set is measured on top of the one before and all stay
/// open until the end, so a set never lands in memory the previous one freed (glibc keeps
/// freed heap, and a set opened after another closed would look nearly free).
enum IdleBench {
  /// The issue's goal: an idle HTTP/2 connection at most twice a native one.
  static let goalRatio = 2.0

  private struct Leg {
    let transport: BenchTransport
    let held: Int
    let failed: Int
    let rssBefore: Double
    let rssAfter: Double

    var perConnection: Double { held > 0 ? (rssAfter - rssBefore) / Double(held) : 0 }
  }

  static func run(_ arguments: Arguments) async throws(CLIError) {
    let count = try BenchCommand.int(arguments, "connections", 10_000)
    let hold = try BenchCommand.int(arguments, "hold-seconds", 5)
    let transports = try BenchTransport.parse(arguments["protocol"], allowed: [.native, .grpc])
    let base = try Connection(arguments)
    guard let ops = arguments["ops"] ?? base.file["ops"] else {
      throw .usage("bench idle needs the daemon's ops address: --ops HOST:PORT")
    }
    var everyClient: [any BenchClient] = []
    defer { for client in everyClient { client.close() } }
    var legs: [Leg] = []
    for transport in transports {
      let (rssBefore, openBefore) = try read(ops)
      var clients: [any BenchClient] = []
      clients.reserveCapacity(count)
      for _ in 0..<count {
        do {
          switch transport {
          case .grpc: clients.append(try GRPCClient(endpoint: base.client.endpoint, defaultTimeoutMs: 60_000))
          default: clients.append(try RPCClient(endpoint: base.client.endpoint, defaultTimeoutMs: 60_000))
          }
        } catch {
          throw .usage(error.description)
        }
      }
      everyClient += clients
      let failed = await open(clients)
      try? await Task.sleep(for: .seconds(hold))
      let (rssAfter, openAfter) = try read(ops)
      legs.append(
        Leg(
          transport: transport, held: Int(openAfter - openBefore), failed: failed, rssBefore: rssBefore,
          rssAfter: rssAfter))
    }
    report(arguments, count, legs)
  }

  /// Makes one call on each client, in waves so the daemon's accept backlog is never the
  /// limit; returns how many failed.
  private static func open(_ clients: [any BenchClient]) async -> Int {
    let method = HealthServiceMethods.check.path
    let payload = CheckRequest().serializedBytes()
    var failed = 0
    let wave = 200
    var index = 0
    while index < clients.count {
      let slice = clients[index..<min(index + wave, clients.count)]
      failed += await withTaskGroup(of: Int.self) { group in
        for client in slice {
          group.addTask {
            do {
              _ = try await client.callRaw(method, payload: payload, metadata: [:], timeoutMs: nil)
              return 0
            } catch {
              return 1
            }
          }
        }
        return await group.reduce(0, +)
      }
      index += wave
    }
    return failed
  }

  /// The daemon's resident bytes and open connections.
  private static func read(_ ops: String) throws(CLIError) -> (rss: Double, open: Double) {
    let rssName = "process_resident_memory_bytes"
    guard let rss = OpsScrape.metric(rssName, ops: ops),
      let open = OpsScrape.metric("anonauth_connections_open", ops: ops)
    else {
      throw .failed("cannot read \(rssName) from http://\(ops)/metrics")
    }
    return (rss, open)
  }

  private static func report(_ arguments: Arguments, _ count: Int, _ legs: [Leg]) {
    let native = legs.first { $0.transport == .native }
    let grpc = legs.first { $0.transport == .grpc }
    let ratio = native.flatMap { n in
      grpc.map { g in n.perConnection > 0 ? g.perConnection / n.perConnection : 0 }
    }
    if arguments.has("json") {
      // One transport: the fields the idle bench always had, at the top level.
      var object: [String: JSONValue] = ["bench": .string("idle"), "requested": .int(Int64(count))]
      if legs.count == 1, let leg = legs.first { object.merge(fields(leg)) { _, new in new } }
      for leg in legs { object[leg.transport.rawValue] = .object(fields(leg)) }
      if let ratio {
        object["memory_ratio_grpc_native"] = .double((ratio * 1000).rounded() / 1000)
        object["goal_ratio"] = .double(goalRatio)
      }
      print(JSONValue.object(object).jsonText)
      return
    }
    for leg in legs {
      print(
        "idle \(leg.transport.rawValue): \(leg.held) connections held open (\(leg.failed) failed to open)")
      print("  daemon RSS: \(Int(leg.rssBefore) / 1024) KiB -> \(Int(leg.rssAfter) / 1024) KiB")
      print("  per connection: \(String(format: "%.1f", leg.perConnection / 1024)) KiB")
    }
    if let ratio {
      let verdict = ratio <= goalRatio ? "within" : "OVER"
      print(
        "daemon memory per idle connection, grpc / native: \(String(format: "%.3f", ratio))x (\(verdict) the \(goalRatio)x goal)"
      )
    }
  }

  private static func fields(_ leg: Leg) -> [String: JSONValue] {
    [
      "held": .int(Int64(leg.held)), "failed": .int(Int64(leg.failed)),
      "rss_before": .int(Int64(leg.rssBefore)),
      "rss_after": .int(Int64(leg.rssAfter)), "bytes_per_connection": .int(Int64(leg.perConnection)),
    ]
  }
}
